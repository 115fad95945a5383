package main

import (
	"os"
	"runtime/debug"

	"hgpsim/run"
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

// sweepResources is what a sweep's heap limit comes from: up to jobs runs
// at once in one heap, each bounded as the largest. No limit (HeapLimit
// 0) when a run has none of its own (over workers).
func sweepResources(jobList []run.SweepJob, jobs int) scenarios.Resources {
	var most int64
	for _, j := range jobList {
		r := scenarios.Estimate(j.Scenario)
		if r.HeapLimit <= 0 {
			return scenarios.Resources{}
		}
		most = max(most, r.HeapLimit)
	}
	return scenarios.Resources{HeapLimit: int64(min(jobs, len(jobList))) * most}
}
