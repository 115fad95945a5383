package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

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
