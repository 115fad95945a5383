package main

import (
	"context"
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

	"github.com/spf13/cobra"

	"hgpsim/actors"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// benchFlags are the flags of `hgpsim bench`.
type benchFlags struct {
	phase    string
	clients  string
	rounds   int
	procs    string
	reps     int
	out      string
	scenario string
	methods  string
}

func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Rounds per second of both drivers, and the split of an outer step",
		Long: `Measure the sequential and the actor driver and print Markdown tables
(docs/performance.md). --phase selects what is timed:

  sgp    SGP rounds on the quickstart setup (softmax, 20 features, 5 classes,
         150 training examples per client, batch 32, stochastic directed
         network with link probabilities ~ U[0.4, 0.8])
  hgp    HGP and VR-HGP rounds on the same setup with the label-weights head,
         linearized after 50 SGP rounds
  outer  one PDBO outer step of --scenario, split into SGP, evaluation,
         linearization, hyper-gradient rounds and λ-update

Some defaults depend on --phase, as each flag's help says.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Sprintf("bench takes no positional arguments, got %q", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdBench(f, cmd.Flags().Changed, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.phase, "phase", "sgp", "what to time: sgp | hgp | outer")
	fl.StringVar(&f.clients, "clients", "10,100,1000", "comma-separated client counts (default 10,100 for --phase hgp, 20,100 for outer)")
	fl.IntVar(&f.rounds, "rounds", 200, "rounds per measurement (outer: at most this many SGP and hyper-gradient rounds, default 30; the rest is extrapolated)")
	fl.StringVar(&f.procs, "procs", strconv.Itoa(runtime.GOMAXPROCS(0)), "comma-separated GOMAXPROCS values")
	fl.IntVar(&f.reps, "reps", 3, "measurements per driver and client count (the median is reported; default 1 for outer)")
	fl.StringVar(&f.out, "out", "", "also write the tables to FILE")
	fl.StringVar(&f.scenario, "scenario", outerScenario, "outer: the scenario file whose outer step is timed")
	fl.StringVar(&f.methods, "methods", "pdbo-da,pdbo-mtl-da", "outer: comma-separated methods (pdbo-*)")
	return cmd
}

// cmdBench measures throughput of the sequential and the actor driver and
// prints Markdown tables. --phase selects what is timed:
//
//   - sgp (default): SGP rounds on the quickstart setup (scenarios.Default:
//     softmax, 20 features, 5 classes, 150 training examples per client,
//     batch 32, stochastic-directed network with δ̄ ~ U[0.4, 0.8]);
//   - hgp: HGP and VR-HGP rounds on the same setup with the label-weights
//     head, linearized after 50 SGP rounds (benchHGP);
//   - outer: one PDBO outer step of a scenario file (by default the
//     Fashion-MNIST personalization scenario) split into SGP, evaluation,
//     linearization, hyper-gradient rounds and λ-update (benchOuter).
//
// set reports the flags given on the command line; the others take the
// phase's defaults.
func cmdBench(f benchFlags, set func(name string) bool, stdout, stderr io.Writer) error {
	switch f.phase {
	case "sgp":
	case "hgp":
		if !set("clients") {
			f.clients = "10,100"
		}
	case "outer":
		if !set("clients") {
			f.clients = "20,100"
		}
		if !set("rounds") {
			f.rounds = 30
		}
		if !set("reps") {
			f.reps = 1
		}
	default:
		return usageError{fmt.Sprintf("--phase must be sgp, hgp or outer, got %q", f.phase)}
	}
	if f.phase != "outer" && (set("scenario") || set("methods")) {
		return usageError{"--scenario and --methods only apply to --phase outer"}
	}
	clients, err := intList("clients", f.clients, 2, 10000)
	if err != nil {
		return err
	}
	procs, err := intList("procs", f.procs, 1, 1024)
	if err != nil {
		return err
	}
	if f.rounds < 1 {
		return usageError{fmt.Sprintf("--rounds must be >= 1, got %d", f.rounds)}
	}
	if f.reps < 1 {
		return usageError{fmt.Sprintf("--reps must be >= 1, got %d", f.reps)}
	}
	var methods []string
	for _, m := range strings.Split(f.methods, ",") {
		m = strings.TrimSpace(m)
		if !strings.HasPrefix(m, "pdbo-") || !slices.Contains(scenarios.Methods, m) {
			return usageError{fmt.Sprintf("--methods must list pdbo-* methods (%v), got %q", scenarios.Methods, m)}
		}
		methods = append(methods, m)
	}

	var doc strings.Builder
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	switch f.phase {
	case "hgp":
		err = benchHGPDoc(&doc, stderr, clients, procs, f.rounds, f.reps)
	case "outer":
		err = benchOuterDoc(&doc, stderr, f.scenario, methods, clients, procs, f.rounds, f.reps)
	default:
		err = benchSGPDoc(&doc, stderr, clients, procs, f.rounds, f.reps)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(&doc, "\npeak RSS of the process (VmHWM): %s\n", peakRSS())
	fmt.Fprint(stdout, doc.String())
	if f.out != "" {
		if err := os.WriteFile(f.out, []byte(doc.String()), 0o644); err != nil {
			return fmt.Errorf("writing the tables: %w", err)
		}
	}
	return nil
}

// benchSGPDoc is --phase sgp: one table per GOMAXPROCS value.
func benchSGPDoc(doc *strings.Builder, stderr io.Writer, clients, procs []int, rounds, reps int) error {
	fmt.Fprintf(doc, "hgpsim bench: %d SGP rounds per measurement, median of %d alternating measurements per driver; %s\n",
		rounds, reps, machine())
	for _, p := range procs {
		runtime.GOMAXPROCS(p)
		fmt.Fprintf(doc, "\nGOMAXPROCS=%d\n\n", p)
		fmt.Fprintln(doc, "| clients | driver | rounds/s | ms/round | actors/sequential time | allocs/round | setup heap MiB | peak heap MiB |")
		fmt.Fprintln(doc, "|---:|---|---:|---:|---:|---:|---:|---:|")
		for _, n := range clients {
			fmt.Fprintf(stderr, "bench: GOMAXPROCS=%d, %d clients ...\n", p, n)
			res, err := benchClients(n, rounds, reps)
			if err != nil {
				return err
			}
			for k, r := range res {
				fmt.Fprintf(doc, "| %d | %s |%s\n", n, r.driver, r.cells(rounds, k, res[0]))
			}
		}
	}
	return nil
}

func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

// cells renders rounds/s, ms/round, the ratio to the sequential result seq
// (k = 0 is the sequential driver itself), allocs/round and the heaps.
func (r benchResult) cells(rounds, k int, seq benchResult) string {
	rel := "1 (yardstick)"
	if k == 1 {
		rel = fmt.Sprintf("%.2f", r.wall.Seconds()/seq.wall.Seconds())
	}
	return fmt.Sprintf(" %.1f | %.3f | %s | %.0f | %.1f | %.1f |",
		float64(rounds)/r.wall.Seconds(), float64(r.wall.Microseconds())/1e3/float64(rounds),
		rel, r.allocs, mib(r.setupHeap), mib(r.peakHeap))
}

// benchResult is the median over the repetitions of one driver.
type benchResult struct {
	driver    string
	wall      time.Duration // median wall time of the phase
	allocs    float64       // median heap allocations per round
	setupHeap uint64        // live heap after GC before the phase (data, network, clients)
	peakHeap  uint64        // largest heap seen during any repetition
}

var driverNames = [2]string{"sequential", "actors"}

// alternate runs reps repetitions of one measurement per driver, the
// drivers in alternating order (seq, act / act, seq / …), and returns the
// median per driver. phase builds the phase of a measurement; it is called
// before the measurement, outside the timer.
func alternate(net *graph.Network, reps int, phase func() *optim.Phase) ([2]benchResult, error) {
	var walls, allocs [2][]float64
	var res [2]benchResult
	for rep := 0; rep < reps; rep++ {
		for k := 0; k < 2; k++ {
			d := k
			if rep%2 == 1 {
				d = 1 - k
			}
			m, err := measure(driverNames[d], net, phase())
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
		res[d].driver = driverNames[d]
		res[d].wall = time.Duration(median(walls[d]))
		res[d].allocs = median(allocs[d])
	}
	return res, nil
}

// settle lets the goroutines of actor systems closed by the previous
// measurement wind down and collects garbage, so that their memory is not
// counted as setup heap.
func settle() {
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
}

// benchClients builds the setup for n clients once and runs reps phases of
// rounds rounds with each driver, alternating which driver goes first. Both
// drivers run the same clients (they carry on from the previous phase, which
// does not change the cost of a round). Every measurement gets a fresh
// driver, so one-time growth of its buffers is part of what is measured.
func benchClients(n, rounds, reps int) ([2]benchResult, error) {
	settle()
	sc := scenarios.Default()
	sc.Clients = n
	sc.SGP.Rounds = rounds
	sc.SGP.EvalEvery = 0 // evaluate only after the last round
	run, err := scenarios.Build(sc)
	if err != nil {
		return [2]benchResult{}, err
	}
	beh := run.SGPPhase().Clients
	return alternate(run.Net, reps, func() *optim.Phase {
		return &optim.Phase{Name: "sgp", Rounds: rounds, Clients: beh}
	})
}

// newDriver returns a fresh driver of the given name and a function that
// closes it.
func newDriver(name string, nw *graph.Network) (optim.Driver, func()) {
	if name == "sequential" {
		return optim.NewSequential(nw), func() {}
	}
	rt := actors.New(nw, actors.Options{RoundTimeout: time.Minute})
	return rt, rt.Close
}

// measure runs one phase with a fresh driver. The timer covers Run only;
// creating (and closing) the actor system is outside it.
func measure(driver string, nw *graph.Network, p *optim.Phase) (benchResult, error) {
	d, closeDriver := newDriver(driver, nw)
	defer closeDriver()
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
		allocs:    float64(after.Mallocs-before.Mallocs) / float64(p.Rounds),
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

// hgpWarmup is the number of SGP rounds run before the hyper-gradient
// phases of --phase hgp, so that they linearize a trained state with
// counted p̄, δ̄ estimates.
const hgpWarmup = 50

// benchHGPDoc is --phase hgp: HGP and VR-HGP rounds per second of both
// drivers, one table per GOMAXPROCS value.
func benchHGPDoc(doc *strings.Builder, stderr io.Writer, clients, procs []int, rounds, reps int) error {
	fmt.Fprintf(doc, "hgpsim bench --phase hgp: quickstart setup with the label-weights head on softmax (d_x = 105, d_λ = 5), "+
		"linearized after %d SGP rounds; %d hyper-gradient rounds per measurement (simultaneous sampling, batch 32), "+
		"median of %d alternating measurements per driver; %s\n", hgpWarmup, rounds, reps, machine())
	for _, p := range procs {
		runtime.GOMAXPROCS(p)
		fmt.Fprintf(doc, "\nGOMAXPROCS=%d\n\n", p)
		fmt.Fprintln(doc, "| clients | estimator | driver | rounds/s | ms/round | actors/sequential time | allocs/round | setup heap MiB | peak heap MiB |")
		fmt.Fprintln(doc, "|---:|---|---|---:|---:|---:|---:|---:|---:|")
		for _, n := range clients {
			fmt.Fprintf(stderr, "bench: GOMAXPROCS=%d, %d clients ...\n", p, n)
			res, err := benchHGP(n, rounds, reps)
			if err != nil {
				return err
			}
			for e, est := range hgpEstimators {
				for k, r := range res[e] {
					fmt.Fprintf(doc, "| %d | %s | %s |%s\n", n, est, r.driver, r.cells(rounds, k, res[e][0]))
				}
			}
		}
	}
	return nil
}

var hgpEstimators = [2]string{"hgp", "vr-hgp"}

// benchHGP builds the quickstart setup for n clients with the label-weights
// head (λ⁽⁰⁾ = 0, outer L2 0), runs hgpWarmup SGP rounds with the
// sequential driver, and then times phases of rounds rounds of each
// estimator (HGP; VR-HGP with α = 0.9, β = 0.1) with each driver. Every
// measurement linearizes afresh (outside the timer) at the same SGP state,
// so all of them do the same work.
func benchHGP(n, rounds, reps int) ([2][2]benchResult, error) {
	settle()
	var res [2][2]benchResult
	sc := scenarios.Default()
	sc.Clients = n
	sc.Model.Head = registry.Choose[models.Head]("label-weights")
	sc.Model.OuterL2 = 0
	sc.SGP.Rounds = hgpWarmup
	sc.SGP.EvalEvery = 0
	sc.Hypergradient.Estimator = "hgp"
	sc.Hypergradient.M = rounds
	sc.Hypergradient.Sampling = "simultaneous"
	sc.Hypergradient.Batch = 32
	run, err := scenarios.Build(sc)
	if err != nil {
		return res, err
	}
	if _, err := optim.NewSequential(run.Net).Run(context.Background(), run.SGPPhase(), nil); err != nil {
		return res, fmt.Errorf("bench: SGP warm-up: %w", err)
	}
	lr := schedule(sc.SGP.LR).At(hgpWarmup - 1)
	for e, est := range hgpEstimators {
		run.Scenario.Hypergradient.Estimator = est
		res[e], err = alternate(run.Net, reps, func() *optim.Phase {
			p, _, _ := run.HypergradientPhase(lr)
			p.Rounds = rounds
			return p
		})
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func schedule(s scenarios.ScheduleSpec) optim.Schedule {
	return optim.Schedule{Kind: s.Schedule, Base: s.Base, Milestones: s.Milestones, Gamma: s.Gamma, Decay: s.Decay, Power: s.Power}
}

// outerScenario is the default scenario of --phase outer.
const outerScenario = "scenarios/paper/personalization-stod.yaml"

// outerParts is the wall time of the parts of one outer step (Alg. 1 at
// s = 0) with one driver.
type outerParts struct {
	sgp    time.Duration // T' SGP rounds, no evaluation
	eval   time.Duration // Observe on every client, through the driver
	lin    time.Duration // linearization: each client's ⟨c^y⟩, ⟨c^λ⟩ (a full pass of F_i) and estimators
	hgp    time.Duration // M' hyper-gradient rounds
	lambda time.Duration // every client's λ-update
}

func (o outerParts) vec() [5]float64 {
	return [5]float64{float64(o.sgp), float64(o.eval), float64(o.lin), float64(o.hgp), float64(o.lambda)}
}

// silent hides a behaviour's Observe method, so a driver runs its rounds
// without evaluating after the last one.
type silent struct{ optim.Behaviour }

// observing is a phase behaviour that sends nothing and only reports its
// client's Observe: a one-round phase of it is the evaluation the outer
// loop does after each SGP run, on the clients as the driver runs them.
type observing struct{ o optim.Observer }

func (observing) Send(int, []int, []float64) []float64 { return nil }
func (observing) Receive(int, []optim.Message) error   { return nil }
func (b observing) Observe() optim.Stats               { return b.o.Observe() }

// benchOuterDoc is --phase outer.
func benchOuterDoc(doc *strings.Builder, stderr io.Writer, file string, methods []string, clients, procs []int, capRounds, reps int) error {
	base, err := scenarios.Load(file)
	if err != nil {
		return err
	}
	data := base.Data.Source.Name
	note := ""
	if idx, ok := base.Data.Source.Params.(*models.IDXData); ok {
		if missing := idx.Missing(); len(missing) > 0 {
			base.Data = scenarios.Default().Data
			note = fmt.Sprintf(" %s is not installed (%s missing), so the synthetic data of scenarios.Default() "+
				"(20 features, 5 classes, 150 training examples per client) stand in for it.", data, missing[0])
			data = "synthetic (fallback)"
		}
	}
	fmt.Fprintf(doc, "hgpsim bench --phase outer: %s (data %s), one outer step at s = 0: at most %d SGP and %d hyper-gradient rounds measured, "+
		"the rest extrapolated linearly per round; median of %d measurements per driver (drivers alternate); %s.%s\n",
		file, data, capRounds, capRounds, reps, machine(), note)
	for _, p := range procs {
		runtime.GOMAXPROCS(p)
		fmt.Fprintf(doc, "\nGOMAXPROCS=%d\n", p)
		for _, n := range clients {
			for _, m := range methods {
				fmt.Fprintf(stderr, "bench: GOMAXPROCS=%d, %d clients, %s ...\n", p, n, m)
				if err := benchOuter(doc, base, m, n, capRounds, reps); err != nil {
					return fmt.Errorf("bench %s, %d clients: %w", m, n, err)
				}
			}
		}
	}
	return nil
}

// benchOuter builds the scenario for method and n clients with at most
// capRounds SGP and hyper-gradient rounds, times one outer step with each
// driver and writes a table with the measured parts and the extrapolation
// to the scenario's T and M.
func benchOuter(doc *strings.Builder, base scenarios.Scenario, method string, n, capRounds, reps int) error {
	settle()
	sc := base
	sc.Method = method
	sc.Clients = n
	sc.SGP.EvalEvery = 0
	sc.Hypergradient.EvalEvery = 0
	sc.Hypergradient.Oracle = false
	full := sc
	if err := full.Validate(); err != nil { // resolves the method preset
		return err
	}
	sampling := optim.Simultaneous
	if full.Hypergradient.Sampling == "alternate" {
		sampling = optim.Alternate
	}
	bigT, bigM := full.SGP.Rounds, sampling.Rounds(full.Hypergradient.M)
	if full.Hypergradient.Estimator == "local" {
		bigM = 0
	}
	// The linearized map's step, as runHypergradient takes it: the last SGP
	// step of the full schedule.
	lr := full.Hypergradient.LR
	if lr == 0 {
		lr = schedule(full.SGP.LR).At(bigT - 1)
	}
	t, m := min(bigT, capRounds), min(bigM, capRounds)
	sc.SGP.Rounds = t
	buildStart := time.Now()
	run, err := scenarios.Build(sc)
	if err != nil {
		return err
	}
	build := time.Since(buildStart)
	sc = run.Scenario
	trainN, fullBatch := 0, ""
	for _, d := range run.Data {
		trainN += d.Train.N
		if d.Train.N <= max(sc.SGP.Batch, sc.Hypergradient.Batch) {
			fullBatch = ", full batch on clients with fewer examples"
		}
	}
	fmt.Fprintf(doc, "\n%d clients, %s (head %s, estimator %s): d_x = %d, d_λ = %d, %.0f training examples per client on average, "+
		"batch %d (SGP) / %d (HGP)%s; measured T' = %d of T = %d SGP rounds and M' = %d of M = %d hyper-gradient rounds; "+
		"building the run (data, network, clients) took %.1f s.\n\n",
		n, method, sc.Model.Head.Name, sc.Hypergradient.Estimator, run.Model.DimX(), run.Model.DimLambda(),
		float64(trainN)/float64(n), sc.SGP.Batch, sc.Hypergradient.Batch, fullBatch, t, bigT, m, bigM, build.Seconds())

	var samples [2][][5]float64
	for rep := 0; rep < reps; rep++ {
		for k := 0; k < 2; k++ {
			d := k
			if rep%2 == 1 {
				d = 1 - k
			}
			settle()
			parts, err := outerStep(driverNames[d], run, t, m, lr)
			if err != nil {
				return err
			}
			samples[d] = append(samples[d], parts.vec())
		}
	}
	var med [2][5]float64 // ms
	for d := range med {
		for j := range med[d] {
			col := make([]float64, len(samples[d]))
			for r, s := range samples[d] {
				col[r] = s[j]
			}
			med[d][j] = median(col) / 1e6
		}
	}
	fmt.Fprintln(doc, "| driver | SGP ms/round | SGP ms (T') | evaluation ms | linearization ms | HGP ms/round | HGP ms (M') | λ-update ms | outer step ms, measured | outer step s at T, M (extrapolated) | SGP / evaluation / linearization + HGP share at T, M | actors/sequential at T, M |")
	fmt.Fprintln(doc, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	var fullStep [2]float64
	for d := range med {
		v := med[d]
		perSGP := v[0] / float64(t)
		perHGP := 0.0
		if m > 0 {
			perHGP = v[3] / float64(m)
		}
		sgpFull, hgpFull := perSGP*float64(bigT), perHGP*float64(bigM)
		fullStep[d] = sgpFull + v[1] + v[2] + hgpFull + v[4]
		measured := v[0] + v[1] + v[2] + v[3] + v[4]
		rel := "1 (yardstick)"
		if d == 1 {
			rel = fmt.Sprintf("%.2f", fullStep[1]/fullStep[0])
		}
		fmt.Fprintf(doc, "| %s | %.2f | %.0f | %.0f | %.0f | %.2f | %.0f | %.2f | %.0f | %.2f | %.0f %% / %.0f %% / %.0f %% | %s |\n",
			driverNames[d], perSGP, v[0], v[1], v[2], perHGP, v[3], v[4], measured, fullStep[d]/1e3,
			100*sgpFull/fullStep[d], 100*v[1]/fullStep[d], 100*(v[2]+hgpFull)/fullStep[d], rel)
	}
	if s := full.Outer.Steps; s > 0 {
		// Alg. 1 as scenarios runs it: S+1 SGP runs (each evaluated), S
		// hyper-gradient phases and λ-updates.
		fmt.Fprintf(doc, "\nWhole run at S = %d outer steps, extrapolated ((S+1)·(SGP + evaluation) + S·(linearization + HGP + λ-update)): ", s)
		for d := range med {
			if d > 0 {
				fmt.Fprint(doc, ", ")
			}
			v := med[d]
			perSGP := v[0] / float64(t)
			perHGP := 0.0
			if m > 0 {
				perHGP = v[3] / float64(m)
			}
			total := float64(s+1)*(perSGP*float64(bigT)+v[1]) + float64(s)*(v[2]+perHGP*float64(bigM)+v[4])
			fmt.Fprintf(doc, "%s %.0f s", driverNames[d], total/1e3)
		}
		fmt.Fprintln(doc, ".")
	}
	return nil
}

// outerStep times the parts of one outer step through a fresh driver of the
// given name: t SGP rounds without evaluation, the evaluation of every
// client, the linearization, m hyper-gradient rounds and the λ-update (on
// copies of λ, so the run's hyperparameters stay λ⁽⁰⁾). The SGP clients
// carry on from earlier measurements, which does not change a round's cost.
func outerStep(driver string, run *scenarios.Run, t, m int, lr float64) (outerParts, error) {
	var o outerParts
	d, closeDriver := newDriver(driver, run.Net)
	defer closeDriver()
	ctx := context.Background()
	timed := func(dst *time.Duration, p *optim.Phase) error {
		start := time.Now()
		_, err := d.Run(ctx, p, nil)
		*dst = time.Since(start)
		if err != nil {
			return fmt.Errorf("%s, phase %s: %w", driver, p.Name, err)
		}
		return nil
	}
	n := len(run.SGP)
	sgp, eval := make([]optim.Behaviour, n), make([]optim.Behaviour, n)
	for i, c := range run.SGP {
		sgp[i], eval[i] = silent{c}, observing{c}
	}
	if err := timed(&o.sgp, &optim.Phase{Name: "sgp", Rounds: t, Clients: sgp}); err != nil {
		return o, err
	}
	if err := timed(&o.eval, &optim.Phase{Name: "evaluation", Rounds: 1, Clients: eval}); err != nil {
		return o, err
	}
	start := time.Now()
	phase, est, _ := run.HypergradientPhase(lr)
	o.lin = time.Since(start)
	phase.Rounds = min(phase.Rounds, m)
	if err := timed(&o.hgp, phase); err != nil {
		return o, err
	}
	sc := run.Scenario
	upd := make([]optim.Behaviour, n)
	for i := range upd {
		rates := make([]float64, len(run.Lambda[i]))
		for k := range rates {
			rates[k] = sc.Outer.LR
			if sc.Model.Head.Name == "ensemble-label-weights" && k >= sc.Model.K {
				rates[k] = sc.Outer.LRLabels
			}
		}
		var opt optim.OuterOptimizer = &optim.Adam{LR: rates, Beta1: sc.Outer.Beta1, Beta2: sc.Outer.Beta2, Eps: sc.Outer.Eps}
		if sc.Outer.Optimizer == "sgd" {
			opt = &optim.SGD{LR: rates}
		}
		upd[i] = &optim.OuterStep{Lambda: slices.Clone(run.Lambda[i]), Est: est[i], Opt: opt}
	}
	err := timed(&o.lambda, &optim.Phase{Name: "outer", Rounds: 1, Clients: upd})
	return o, err
}
