package run

import (
	"fmt"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/internal/vec"
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
	Data     []datasets.ClientData   // by node; zero outside Hosted
	Model    models.Bilevel[float64] // prototype; each client holds its own clone
	X0       []float64               // common initial parameters
	factory  optim.ClientFactory
	program  optim.Program
	// lo and hi bound the nodes whose data and clients were built.
	lo, hi int
}

// A BuildOption changes what Build builds.
type BuildOption func(*buildOptions)

type buildOptions struct {
	lo, hi int
	block  bool
}

// Hosting makes Build build the data and the clients of nodes lo … hi−1
// only, as a process that hosts just those clients needs: Data holds the
// zero ClientData for every other node, and Factory refuses them. Client
// i of such a Run is the client i of a full Build, bit for bit (the
// sources' LoadBlock promise). The network, the model, the initial
// parameters and the program are the whole run's.
//
// Algorithms with a server (optim.Algorithm.Server) still get every node's
// data: their plans and their server read all of it. Hosting(0, 0) builds
// no client's data and reads no data file, for a supervisor whose clients
// all live in worker processes.
func Hosting(lo, hi int) BuildOption {
	return func(o *buildOptions) { o.lo, o.hi, o.block = lo, hi, true }
}

// Hosted returns the nodes whose clients the Run can build, lo … hi−1.
func (r *Run) Hosted() (lo, hi int) { return r.lo, r.hi }

// Build turns a validated scenario into a Run. Errors a user can fix
// (for example a disconnected expected graph or missing data files) are
// InvalidErrors.
func Build(sc scenarios.Scenario, opts ...BuildOption) (*Run, error) {
	var o buildOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := sc.Validate(); err != nil {
		return nil, scenarios.Invalid("scenario", "%s", err.Error())
	}
	n := sc.Nodes()
	if !o.block || sc.Algorithm.Params.Server() {
		o = buildOptions{lo: 0, hi: n}
	} else if o.lo < 0 || o.hi < o.lo || o.hi > n {
		return nil, fmt.Errorf("hosting nodes %d … %d of a run of %d nodes", o.lo, o.hi-1, n)
	}
	nw, err := scenarios.BuildNetwork(sc)
	if err != nil {
		return nil, err
	}
	data, err := loadData(sc, o.lo, o.hi)
	if err != nil {
		return nil, err
	}
	model := bilevelModel(sc)
	x0 := make([]float64, model.DimX())
	model.Init(x0, rng.New(sc.Seed, rng.Global, rng.PurposeInit))
	r := &Run{Scenario: sc, Net: nw, Data: data, Model: model, X0: x0, lo: o.lo, hi: o.hi}
	setup := &optim.Setup{Net: nw, Data: data, Model: model, X0: x0, Seed: sc.Seed,
		Head: sc.Model.Head.Name, HeadParams: sc.Model.HeadParams(), Sections: &r.Scenario}
	if sc.Float32() {
		// float32 clients start from the float64 initial parameters rounded
		// once, so that both precisions start from the same point.
		x32 := make([]float32, len(x0))
		vec.Narrow(x32, x0)
		features, classes := sc.Shape()
		setup.Float32 = &optim.Float32Setup{X0: x32,
			Model: models.Build[float32](sc.Model.Arch.Params, sc.Model.Head.Params, features, classes, sc.Model.HeadParams())}
	}
	if sc.Algorithm.Params.Server() {
		setup.Test = pooledTest(data) // the server evaluates the global model on it
	}
	factory, program, err := sc.Algorithm.Params.Plan(setup)
	if err != nil {
		return nil, scenarios.Invalid("scenario", "algorithm (%s): %s", sc.Algorithm.Name, err.Error())
	}
	r.Net = setup.Net // the algorithm may train over another network
	r.program = program
	if err := checkTraceHorizon(r.Net, program); err != nil {
		return nil, err
	}
	reinit := map[int]bool{}
	for _, i := range r.Net.ReinitNodes() {
		if i < r.lo || i >= r.hi {
			continue // checked where it is hosted
		}
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
		if i < r.lo || i >= r.hi {
			return nil, fmt.Errorf("run: node %d is not hosted by this build (nodes %d … %d)", i, r.lo, r.hi-1)
		}
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

// checkTraceHorizon refuses a run whose schedule outlives the links trace
// it replays when the trace's end policy is fail: the run would fail at
// the round the trace ends. A program that may stop early is checked
// against its whole schedule.
func checkTraceHorizon(nw *graph.Network, p optim.Program) error {
	tr, ok := nw.Process.(graph.LinkTrace)
	h, known := p.(optim.Horizon)
	if !ok || !known || !tr.FailsPastEnd() {
		return nil
	}
	if end := h.Horizon(); end > tr.Rounds() {
		return scenarios.Invalid("scenario", "network.links: the run takes %d communication rounds, more than the %d of the links trace %s, whose end policy is fail (use end: loop or hold, a longer trace, or fewer rounds)",
			end, tr.Rounds(), tr.File())
	}
	return nil
}

// supervisorBuild is the build options of the process that runs a
// scenario's program: with worker processes, which build their clients'
// data themselves, it builds none, unless it computes the hyper-gradient
// oracle, which needs every node's.
func supervisorBuild(sc scenarios.Scenario) []BuildOption {
	if len(sc.Runtime.Workers) == 0 || sc.Hypergradient.Oracle {
		return nil
	}
	return []BuildOption{Hosting(0, 0)}
}

// pooledTest is the test data of every node in one set.
func pooledTest(data []datasets.ClientData) *datasets.Dataset {
	parts := make([]*datasets.Dataset, 0, len(data))
	for _, d := range data {
		if d.Test != nil && d.Test.N > 0 {
			parts = append(parts, d.Test)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return datasets.Pool(parts...)
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
func bilevelModel(sc scenarios.Scenario) models.Bilevel[float64] {
	features, classes := sc.Shape()
	return models.Build[float64](sc.Model.Arch.Params, sc.Model.Head.Params, features, classes, sc.Model.HeadParams())
}

// loadData builds the splits of nodes lo … hi−1, by node (the others' are
// zero). Missing data files are an input error naming them and how to
// install them; no block reads no file.
func loadData(sc scenarios.Scenario, lo, hi int) ([]datasets.ClientData, error) {
	n := sc.Nodes()
	if lo == hi {
		return make([]datasets.ClientData, n), nil
	}
	src := sc.Data.Source.Params
	if m, ok := src.(interface{ Missing() []string }); ok && len(m.Missing()) > 0 {
		_, err := src.Load(n, sc.Seed) // its error names the files and how to install them
		return nil, scenarios.Invalid("scenario", "data: %s", err.Error())
	}
	var block []datasets.ClientData
	var err error
	if lo == 0 && hi == n {
		block, err = src.Load(n, sc.Seed)
	} else {
		block, err = datasets.LoadBlock(src, n, sc.Seed, lo, hi)
	}
	if err == nil && len(block) != hi-lo {
		err = fmt.Errorf("built the data of %d nodes, not %d", len(block), hi-lo)
	}
	if err != nil {
		return nil, scenarios.Invalid("scenario", "data (%s): %s", sc.Data.Source.Name, err.Error())
	}
	if lo == 0 && hi == n {
		return block, nil
	}
	data := make([]datasets.ClientData, n)
	copy(data[lo:], block)
	return data, nil
}
