package main

import (
	"os"
	"runtime/debug"

	"hgpsim/scenarios"
)

// boundHeap gives the Go runtime a soft memory limit from the run's
// estimate (Resources.HeapLimit), unless GOMEMLIMIT sets one: without a
// limit the collector lets the heap grow to twice what survived its last
// cycle, which for runs of large models is gigabytes of garbage kept
// resident.
func boundHeap(res scenarios.Resources) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || res.HeapLimit <= 0 {
		return
	}
	debug.SetMemoryLimit(res.HeapLimit)
}
