package run

import (
	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/faults"
	"hgpsim/scenarios"
)

// Run is a scenario turned into what its clients are built from: the
// network, each node's data, the model and the initial parameters, and the
// algorithm's plan (the client factory and the program). It is built once
// and run once; the clients themselves are built by the driver, each where
// it lives, with Factory.
type Run struct {
	Scenario scenarios.Scenario
	Net      *graph.Network
	Data     []models.ClientData // by node
	Model    models.Bilevel      // prototype; each client holds its own clone
	X0       []float64           // common initial parameters
	factory  optim.ClientFactory
	program  optim.Program
}

// Build turns a validated scenario into a Run. Errors a user can fix
// (for example a disconnected expected graph or missing data files) are
// InvalidErrors.
func Build(sc scenarios.Scenario) (*Run, error) {
	if err := sc.Validate(); err != nil {
		return nil, scenarios.Invalid("scenario", "%s", err.Error())
	}
	nw, err := scenarios.BuildNetwork(sc)
	if err != nil {
		return nil, err
	}
	data, err := loadData(sc)
	if err != nil {
		return nil, err
	}
	model := bilevelModel(sc)
	x0 := make([]float64, model.DimX())
	model.Init(x0, rng.New(sc.Seed, rng.Global, rng.PurposeInit))
	r := &Run{Scenario: sc, Net: nw, Data: data, Model: model, X0: x0}
	setup := &optim.Setup{Net: nw, Data: data, Model: model, X0: x0, Seed: sc.Seed,
		Head: sc.Model.Head.Name, HeadParams: sc.Model.HeadParams(), Sections: &r.Scenario}
	if sc.Algorithm.Params.Server() {
		setup.Test = pooledTest(data) // the server evaluates the global model on it
	}
	factory, program, err := sc.Algorithm.Params.Plan(setup)
	if err != nil {
		return nil, scenarios.Invalid("scenario", "algorithm (%s): %s", sc.Algorithm.Name, err.Error())
	}
	r.Net = setup.Net // the algorithm may train over another network
	r.program = program
	reinit := map[int]bool{}
	for _, i := range r.Net.ReinitNodes() {
		// Refused before the run: a client that cannot restart would
		// silently keep its state.
		c, err := factory(i)
		if err != nil {
			return nil, err
		}
		if _, ok := optim.ReinitializerOf(c); !ok {
			return nil, scenarios.Invalid("scenario", "network.failures: a crash with state: reinit restarts node %d, whose client (%s, %T) cannot restart from its initial state; use state: last",
				i, sc.Algorithm.Name, c)
		}
		reinit[i] = true
	}
	r.factory = func(i int) (optim.Client, error) {
		c, err := factory(i)
		if err != nil {
			return nil, err
		}
		inner := c
		if reinit[i] {
			ri, _ := optim.ReinitializerOf(c)
			inner = optim.Reinitializing(c, ri)
		}
		return optim.Resumable(faults.WithFaults(inner, setup.Env(i), r.faults(i)), c, i), nil
	}
	return r, nil
}

// pooledTest is the test data of every node in one set.
func pooledTest(data []models.ClientData) *models.Dataset {
	parts := make([]*models.Dataset, 0, len(data))
	for _, d := range data {
		if d.Test != nil && d.Test.N > 0 {
			parts = append(parts, d.Test)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return models.Pool(parts...)
}

// Factory returns the function that builds client i of the run (the
// algorithm's client with the scenario's faults).
func (r *Run) Factory() optim.ClientFactory { return r.factory }

// Program returns the run's schedule.
func (r *Run) Program() optim.Program { return r.program }

// faults returns the faults of client i, in the order the scenario lists
// them.
func (r *Run) faults(i int) []faults.Fault {
	var out []faults.Fault
	for _, f := range r.Scenario.Faults {
		for _, c := range f.Clients {
			if c == i {
				out = append(out, f.Fault.Params)
				break
			}
		}
	}
	return out
}

// bilevelModel builds the model of a validated scenario.
func bilevelModel(sc scenarios.Scenario) models.Bilevel {
	features, classes := sc.Shape()
	arch := sc.Model.Arch.Params
	return sc.Model.Head.Params.New(func() models.Classifier { return arch.New(features, classes) }, sc.Model.HeadParams())
}

// loadData builds every client's splits. Missing data files are an input
// error naming them and how to install them.
func loadData(sc scenarios.Scenario) ([]models.ClientData, error) {
	src := sc.Data.Source.Params
	if m, ok := src.(interface{ Missing() []string }); ok && len(m.Missing()) > 0 {
		_, err := src.Load(sc.Nodes(), sc.Seed) // its error names the files and how to install them
		return nil, scenarios.Invalid("scenario", "data: %s", err.Error())
	}
	data, err := src.Load(sc.Nodes(), sc.Seed)
	if err != nil {
		return nil, scenarios.Invalid("scenario", "data (%s): %s", sc.Data.Source.Name, err.Error())
	}
	return data, nil
}
