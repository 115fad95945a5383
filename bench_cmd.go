package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"hgpsim/actors"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// cmdBench measures SGP throughput of the sequential and the actor driver on
// the quickstart setup (scenarios.Default: softmax, 20 features, 5 classes,
// 150 training examples per client, batch 32, stochastic-directed network
// with δ̄ ~ U[0.4, 0.8]) at several client counts, and prints a Markdown
// table per GOMAXPROCS value.
func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	clientsFlag := fs.String("clients", "10,100,1000", "comma-separated client counts")
	rounds := fs.Int("rounds", 200, "SGP rounds per measurement")
	procsFlag := fs.String("procs", strconv.Itoa(runtime.GOMAXPROCS(0)), "comma-separated GOMAXPROCS values")
	reps := fs.Int("reps", 3, "measurements per driver and client count (the median is reported)")
	out := fs.String("out", "", "also write the tables to FILE")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError{fmt.Sprintf("bench takes no positional arguments, got %q", pos[0])}
	}
	clients, err := intList("clients", *clientsFlag, 2, 10000)
	if err != nil {
		return err
	}
	procs, err := intList("procs", *procsFlag, 1, 1024)
	if err != nil {
		return err
	}
	if *rounds < 1 {
		return usageError{fmt.Sprintf("--rounds must be >= 1, got %d", *rounds)}
	}
	if *reps < 1 {
		return usageError{fmt.Sprintf("--reps must be >= 1, got %d", *reps)}
	}

	var doc strings.Builder
	fmt.Fprintf(&doc, "hgpsim bench: %d SGP rounds per measurement, median of %d alternating measurements per driver; %s/%s, %d CPUs, %s\n",
		*rounds, *reps, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	for _, p := range procs {
		runtime.GOMAXPROCS(p)
		fmt.Fprintf(&doc, "\nGOMAXPROCS=%d\n\n", p)
		fmt.Fprintln(&doc, "| clients | driver | rounds/s | ms/round | actors/sequential time | allocs/round | setup heap MiB | peak heap MiB |")
		fmt.Fprintln(&doc, "|---:|---|---:|---:|---:|---:|---:|---:|")
		for _, n := range clients {
			fmt.Fprintf(stderr, "bench: GOMAXPROCS=%d, %d clients ...\n", p, n)
			res, err := benchClients(n, *rounds, *reps)
			if err != nil {
				return err
			}
			seq, act := res[0], res[1]
			ratio := act.wall.Seconds() / seq.wall.Seconds()
			for k, r := range res {
				rel := "1 (yardstick)"
				if k == 1 {
					rel = fmt.Sprintf("%.2f", ratio)
				}
				fmt.Fprintf(&doc, "| %d | %s | %.1f | %.3f | %s | %.0f | %.1f | %.1f |\n", n, r.driver,
					float64(*rounds)/r.wall.Seconds(), float64(r.wall.Microseconds())/1e3/float64(*rounds),
					rel, r.allocs, mib(r.setupHeap), mib(r.peakHeap))
			}
		}
	}
	fmt.Fprintf(&doc, "\npeak RSS of the process (VmHWM): %s\n", peakRSS())
	fmt.Fprint(stdout, doc.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(doc.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// benchResult is the median over the repetitions of one driver.
type benchResult struct {
	driver    string
	wall      time.Duration // median wall time of the phase
	allocs    float64       // median heap allocations per round
	setupHeap uint64        // live heap after GC before the phase (data, network, clients)
	peakHeap  uint64        // largest heap seen during any repetition
}

// benchClients builds the setup for n clients once and runs reps phases of
// rounds rounds with each driver, alternating which driver goes first. Both
// drivers run the same clients (they carry on from the previous phase, which
// does not change the cost of a round). Every measurement gets a fresh
// driver, so one-time growth of its buffers is part of what is measured.
func benchClients(n, rounds, reps int) ([2]benchResult, error) {
	// Let the goroutines of actor systems closed by the previous client
	// count wind down, so that their memory is not counted as setup heap.
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	sc := scenarios.Default()
	sc.Clients = n
	sc.SGP.Rounds = rounds
	sc.SGP.EvalEvery = 0 // evaluate only after the last round
	run, err := scenarios.Build(sc)
	if err != nil {
		return [2]benchResult{}, err
	}
	beh := run.SGPPhase().Clients
	names := [2]string{"sequential", "actors"}
	var walls, allocs [2][]float64
	var res [2]benchResult
	for rep := 0; rep < reps; rep++ {
		for k := 0; k < 2; k++ {
			d := k
			if rep%2 == 1 {
				d = 1 - k
			}
			m, err := measure(names[d], run, beh, rounds)
			if err != nil {
				return res, err
			}
			walls[d] = append(walls[d], float64(m.wall))
			allocs[d] = append(allocs[d], m.allocs)
			res[d].setupHeap = max(res[d].setupHeap, m.setupHeap)
			res[d].peakHeap = max(res[d].peakHeap, m.peakHeap)
		}
	}
	for d := range res {
		res[d].driver = names[d]
		res[d].wall = time.Duration(median(walls[d]))
		res[d].allocs = median(allocs[d])
	}
	return res, nil
}

// measure runs one phase with a fresh driver. The timer covers Run only;
// creating (and closing) the actor system is outside it.
func measure(driver string, run *scenarios.Run, beh []optim.Behaviour, rounds int) (benchResult, error) {
	var d optim.Driver
	switch driver {
	case "sequential":
		d = optim.NewSequential(run.Net)
	default:
		rt := actors.New(run.Net, actors.Options{RoundTimeout: time.Minute})
		defer rt.Close()
		d = rt
	}
	p := &optim.Phase{Name: "sgp", Rounds: rounds, Clients: beh}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := startPeakSampler()
	start := time.Now()
	_, err := d.Run(context.Background(), p, nil)
	wall := time.Since(start)
	peakHeap := peak()
	runtime.ReadMemStats(&after)
	if err != nil {
		return benchResult{}, fmt.Errorf("bench %s: %w", driver, err)
	}
	return benchResult{driver: driver, wall: wall,
		allocs:    float64(after.Mallocs-before.Mallocs) / float64(rounds),
		setupHeap: before.HeapAlloc, peakHeap: max(peakHeap, after.HeapAlloc)}, nil
}

// startPeakSampler reads the heap size (runtime/metrics
// /memory/classes/heap/objects:bytes, the same quantity as
// MemStats.HeapAlloc: live objects plus garbage not yet swept) every
// millisecond without stopping the world, until the returned function is
// called; that function returns the largest value seen.
func startPeakSampler() func() uint64 {
	const name = "/memory/classes/heap/objects:bytes"
	sample := []metrics.Sample{{Name: name}}
	var peak uint64
	read := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			peak = max(peak, sample[0].Value.Uint64())
		}
	}
	read()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() uint64 {
		close(stop)
		wg.Wait()
		return peak
	}
}

func intList(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < lo || v > hi {
			return nil, usageError{fmt.Sprintf("--%s must be a comma-separated list of integers in [%d, %d], got %q", name, lo, hi, s)}
		}
		out = append(out, v)
	}
	return out, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// peakRSS returns VmHWM from /proc/self/status, or "n/a" off Linux.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "n/a"
}
