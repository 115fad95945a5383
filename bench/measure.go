package bench

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"hgpsim/actors"
	"hgpsim/graph"
	"hgpsim/internal/cpuid"
	"hgpsim/internal/gemm"
	"hgpsim/optim"
)

// The drivers a measurement compares, by name.
const (
	Sequential = "sequential" // optim.Sequential: one goroutine, the compute-only yardstick
	Parallel   = "parallel"   // optim.Sequential on GOMAXPROCS goroutines (runtime.parallel: 0)
	Actors     = "actors"     // actors.Runtime: client actors (groups of clients) and a supervisor
)

// Drivers lists the drivers in the order the tables report them: the
// sequential yardstick first.
var Drivers = []string{Sequential, Parallel, Actors}

// NewDriver returns a fresh driver of the named kind over nw, with the
// clients built by factory (inside their actors for the actor runtime), and
// the function that releases it. Building the clients is part of this call,
// not of a measurement.
func NewDriver(name string, nw *graph.Network, factory optim.ClientFactory) (optim.Driver, func(), error) {
	switch name {
	case Sequential, Parallel:
		d, err := optim.NewSequential(nw, factory)
		if err != nil {
			return nil, nil, err
		}
		if name == Parallel {
			d.SetParallel(0)
		}
		return d, func() {}, nil
	case Actors:
		rt, err := actors.New(nw, factory, actors.Options{RoundTimeout: time.Minute})
		if err != nil {
			return nil, nil, err
		}
		return rt, rt.Close, nil
	}
	return nil, nil, fmt.Errorf("bench: no driver %q (want one of %v)", name, Drivers)
}

// Measurement is one timed phase of a driver.
type Measurement struct {
	Driver string
	Rounds int
	// Wall is the wall time of the driver's Execute (building and closing
	// the driver are not part of it).
	Wall time.Duration
	// Allocs is runtime.MemStats.Mallocs after minus before the phase, per
	// round.
	Allocs float64
	// SetupHeap is MemStats.HeapAlloc after a forced GC just before the
	// phase: data, network, clients and (for actors) the actor system.
	SetupHeap uint64
	// PeakHeap is the largest heap seen during the phase (see
	// startPeakSampler).
	PeakHeap uint64
}

// RoundsPerSecond is Rounds divided by Wall.
func (m Measurement) RoundsPerSecond() float64 { return float64(m.Rounds) / m.Wall.Seconds() }

// MsPerRound is Wall in milliseconds divided by Rounds.
func (m Measurement) MsPerRound() float64 {
	return float64(m.Wall.Microseconds()) / 1e3 / float64(m.Rounds)
}

// medianOf returns the per-driver summary of repeated measurements of
// one driver: the median wall time and allocations per round, and the
// largest setup and peak heaps.
func medianOf(ms []Measurement) Measurement {
	walls := make([]float64, len(ms))
	allocs := make([]float64, len(ms))
	out := Measurement{Driver: ms[0].Driver, Rounds: ms[0].Rounds}
	for k, m := range ms {
		walls[k], allocs[k] = float64(m.Wall), m.Allocs
		out.SetupHeap = max(out.SetupHeap, m.SetupHeap)
		out.PeakHeap = max(out.PeakHeap, m.PeakHeap)
	}
	out.Wall = time.Duration(median(walls))
	out.Allocs = median(allocs)
	return out
}

// alternate calls measure reps times per driver, the drivers in rotating
// order (sequential, parallel, actors / parallel, actors, sequential / …),
// so that a slow spell of a shared machine does not hit one driver only. It
// returns the measurements per driver, in the order of Drivers.
func alternate[T any](reps int, measure func(driver string) (T, error)) ([][]T, error) {
	out := make([][]T, len(Drivers))
	for rep := 0; rep < reps; rep++ {
		for k := range Drivers {
			d := (k + rep) % len(Drivers)
			settle()
			m, err := measure(Drivers[d])
			if err != nil {
				return out, err
			}
			out[d] = append(out[d], m)
		}
	}
	return out, nil
}

// settle lets the goroutines of an actor system closed by the previous
// measurement wind down and collects garbage, so that their memory is not
// counted as the next measurement's setup heap.
func settle() {
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
}

// startPeakSampler reads the heap size (runtime/metrics
// /memory/classes/heap/objects:bytes, the same quantity as
// MemStats.HeapAlloc: live objects plus garbage not yet swept) every
// millisecond without stopping the world, until the returned function is
// called; that function returns the largest value seen.
func startPeakSampler() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
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

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// Machine describes the machine (the processor by name, vendor, family
// and model), the kernels chosen for it and the Go version, for table
// headers: a speed holds for one processor and kernel path only.
func Machine() string {
	return fmt.Sprintf("%s; kernels %s; %s/%s, %d CPUs, %s", cpuid.Get(), gemm.Path(),
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

// PeakRSS returns the process's peak resident set size (VmHWM from
// /proc/self/status), or "n/a" off Linux.
func PeakRSS() string {
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
