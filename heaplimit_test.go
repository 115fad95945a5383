package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// cnnWithoutMemoryLimit unsets GOMEMLIMIT and restores the process's
// memory limit when t ends, and returns the CNN personalization scenario.
func cnnWithoutMemoryLimit(t *testing.T) scenarios.Scenario {
	t.Helper()
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	sc, err := scenarios.Load("scenarios/paper/personalization-cnn-stod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A run bounds the Go heap at its estimated live heap and a quarter more,
// unless GOMEMLIMIT says otherwise.
func TestBoundHeap(t *testing.T) {
	sc := cnnWithoutMemoryLimit(t)
	res := scenarios.Estimate(sc)
	if live := res.LiveBytes(); res.HeapLimit < live+live/4 || res.PeakBytes <= res.HeapLimit || res.PeakBytes >= 2*live {
		t.Fatalf("live %d, heap limit %d, peak %d: want live·1.25 ≤ limit < peak < 2·live", live, res.HeapLimit, res.PeakBytes)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	boundHeap(res)
	if got := debug.SetMemoryLimit(-1); got != res.HeapLimit {
		t.Errorf("memory limit %d, want the estimate's %d", got, res.HeapLimit)
	}
	os.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(math.MaxInt64)
	boundHeap(res)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
}

// A sweep's limit is --jobs times its largest run's, and none when a run
// has none.
func TestSweepResources(t *testing.T) {
	small, err := scenarios.Load("scenarios/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	big, err := scenarios.Load("scenarios/paper/personalization-cnn-stod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	jobs := []run.SweepJob{{Scenario: small}, {Scenario: big}, {Scenario: small}}
	if got, want := sweepResources(jobs, 2).HeapLimit, 2*scenarios.Estimate(big).HeapLimit; got != want {
		t.Errorf("two jobs at once: limit %d, want %d", got, want)
	}
	if got, want := sweepResources(jobs[:1], 4).HeapLimit, scenarios.Estimate(small).HeapLimit; got != want {
		t.Errorf("one run, four jobs: limit %d, want %d", got, want)
	}
	over := big
	over.Runtime.Workers = []string{"a:1", "b:2"}
	sup := scenarios.Estimate(over).Processes[0]
	if got, want := sweepResources([]run.SweepJob{{Scenario: over}}, 1).HeapLimit, sup.HeapLimit; got != want || want <= 0 {
		t.Errorf("a run over workers: limit %d, want its supervisor's %d", got, want)
	}
}

// A worker bounds its heap at the estimate of a worker hosting the
// largest block, which is less than one process hosting every client.
func TestBoundWorkerHeap(t *testing.T) {
	sc := cnnWithoutMemoryLimit(t)
	one := scenarios.Estimate(sc)
	sc.Runtime.Workers = []string{"a:1", "b:2", "c:3", "d:4"}
	over := scenarios.Estimate(sc)
	wk := over.Processes[1]
	if wk.Name != "worker" || wk.HeapLimit >= one.HeapLimit || wk.PeakBytes > wk.HeapLimit+64<<20 {
		t.Fatalf("worker %q: limit %d, peak %d; one process's limit %d: want a worker's limit below one process's, and its peak near its limit",
			wk.Name, wk.HeapLimit, wk.PeakBytes, one.HeapLimit)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	boundWorkerHeap(over)
	if got := debug.SetMemoryLimit(-1); got != wk.HeapLimit {
		t.Errorf("memory limit %d, want the worker estimate's %d", got, wk.HeapLimit)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	boundWorkerHeap(one)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("one process's estimate set a worker limit of %d", got)
	}
}
