package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// A run bounds the Go heap at its estimated live heap and a quarter more,
// unless GOMEMLIMIT says otherwise.
func TestBoundHeap(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	sc, err := scenarios.Load("scenarios/paper/personalization-cnn-stod.yaml")
	if err != nil {
		t.Fatal(err)
	}
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
	if got := sweepResources([]run.SweepJob{{Scenario: small}, {Scenario: over}}, 1).HeapLimit; got != 0 {
		t.Errorf("a run over workers: limit %d, want none", got)
	}
}
