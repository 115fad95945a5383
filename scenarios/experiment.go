package scenarios

import (
	"context"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/optim"
)

// Experiment is a registered experiment (`experiment: {kind: …}`): a
// scenario that names one runs it instead of a training run. Its parameters
// are decoded strictly like every plug-in's; the rest of the scenario
// (clients, network, data, model, sgp, runtime) is its input.
type Experiment interface {
	// Validate checks the parameters against the rest of the scenario.
	Validate(sc *Scenario) error
	// Estimate returns the resources the experiment needs.
	Estimate(sc *Scenario) Resources
	// Run performs the experiment, writing its outputs through env, and
	// returns its summary (also written by the experiment to summary.json).
	Run(ctx context.Context, sc Scenario, env Env) (any, error)
}

// Experiments holds the registered experiments.
var Experiments = registry.New[Experiment]("experiment", "kind")

// Env is what an experiment gets from the run: the output folder, the
// drivers the scenario asks for, and progress reporting. It is implemented
// by package run, so that experiments execute exactly as training runs do.
type Env interface {
	// WriteFile writes name in the output folder atomically.
	WriteFile(name string, b []byte) error
	// NewDriver returns the scenario's driver over nw with the clients
	// built by factory, and the function that releases it.
	NewDriver(nw *graph.Network, factory optim.ClientFactory) (optim.Driver, func(), error)
	// Progress reports one step of total.
	Progress(what string, step, total int)
	// Run executes a derived training scenario (any algorithm) into the
	// subfolder sub of the output folder, on the same driver settings, and
	// returns what it measured.
	Run(ctx context.Context, sc Scenario, sub string) (*RunReport, error)
}

// RunReport is what a training run measured, for experiments that compare
// runs: every evaluation of its training phases and the traffic.
type RunReport struct {
	Evals   []Eval
	Final   optim.Aggregate
	Traffic optim.Traffic // every phase
}

// Eval is one evaluated round of a training phase.
type Eval struct {
	Phase   string
	Step    int // outer step
	Round   int // 0-based round of the phase
	Agg     optim.Aggregate
	Traffic optim.Traffic // cumulative over the run up to this round
}
