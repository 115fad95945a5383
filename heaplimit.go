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
// at once in one heap, each bounded as the largest (a run over workers by
// its supervisor's limit). No limit when a run has none.
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

// boundWorkerHeap gives a worker the soft memory limit of the estimate's
// worker process (one hosting the largest block), unless GOMEMLIMIT sets
// one. Without it a worker's resident memory climbed to 4–5 times its
// live heap: every round allocates and drops each client's encoded and
// decoded messages, and the runtime keeps the freed pages.
func boundWorkerHeap(res scenarios.Resources) {
	for _, p := range res.Processes {
		if p.Name == "worker" {
			boundHeap(scenarios.Resources{HeapLimit: p.HeapLimit})
		}
	}
}
