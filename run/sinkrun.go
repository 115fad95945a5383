package run

import (
	"context"

	"hgpsim/optim"
)

// ExecuteTo runs r in this process on the driver its scenario names and
// reports to sink alone: no output folder, no metrics.jsonl, no summary and
// no checkpoints. Experiments that derive many scenarios and compare what
// each run measured use it with their own sink, so that every derived run
// is validated, built and faulted exactly as a training run is.
//
// runtime.workers is ignored, as for an experiment's own clients (Env): a
// derived scenario may carry data the experiment holds in memory, which a
// worker process could not rebuild from the scenario file.
func (r *Run) ExecuteTo(ctx context.Context, sink optim.Sink) (optim.Traffic, error) {
	rs := r.Scenario.Runtime
	rs.Workers = nil
	driver, closeDriver, err := newDriver(rs, r.Net, r.Factory(), nil)
	if err != nil {
		return optim.Traffic{}, err
	}
	defer closeDriver()
	return driver.Execute(ctx, r.Program(), sink)
}
