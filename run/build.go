package run

import (
	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
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
	Config   *optim.PDBOConfig   // pdbo only
	Alg1     *optim.Alg1         // pdbo only
	factory  optim.ClientFactory
	program  optim.Program
	pBarTrue [][]float64 // cache of expectedPushWeights
}

// expectedPushWeights returns the exact p̄ of the run's network, computed
// once: it is O(n³) and the network never changes during a run.
func (r *Run) expectedPushWeights() [][]float64 {
	if r.pBarTrue == nil {
		r.pBarTrue = r.Net.ExpectedPushWeights()
	}
	return r.pBarTrue
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
	if sc.IsLocal() {
		nw = isolated(sc.Nodes())
	}
	r := &Run{Scenario: sc, Net: nw, Data: data, Model: model, X0: x0}
	setup := &optim.Setup{Net: nw, Data: data, Model: model, X0: x0, Seed: sc.Seed}
	if sc.Algorithm.Params.Server() {
		setup.Test = pooledTest(data) // the server evaluates the global model on it
	}
	if sc.Algorithm.Name == "pdbo" {
		r.Config = pdboConfig(sc)
		r.Alg1 = r.pdboProgram()
		setup.PDBO = &optim.PDBOSetup{Config: r.Config, Program: r.Alg1}
		if r.Config.Estimator != "" && sc.Hypergradient.Estimates == "true" {
			setup.PDBO.TrueP = r.expectedPushWeights()
			setup.PDBO.TrueDelta = make([][]float64, nw.N)
			for i := range setup.PDBO.TrueDelta {
				setup.PDBO.TrueDelta[i] = make([]float64, nw.N)
				for j := range nw.N {
					setup.PDBO.TrueDelta[i][j] = nw.Prob[j][i] // δ̄_{j→i}
				}
			}
		}
	}
	factory, program, err := sc.Algorithm.Params.Plan(setup)
	if err != nil {
		return nil, scenarios.Invalid("scenario", "algorithm (%s): %s", sc.Algorithm.Name, err.Error())
	}
	r.program = program
	r.factory = func(i int) (optim.Client, error) {
		c, err := factory(i)
		if err != nil {
			return nil, err
		}
		return optim.Resumable(optim.WithFaults(c, i, r.faults(i)), c, i), nil
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

// pdboConfig is the configuration every client of a validated scenario
// shares.
func pdboConfig(sc scenarios.Scenario) *optim.PDBOConfig {
	h := sc.Hypergradient
	variant := optim.AfterComm
	if sc.SGP.Variant == "before" {
		variant = optim.BeforeComm
	}
	sampling := optim.Simultaneous
	if h.Sampling == "alternate" {
		sampling = optim.Alternate
	}
	sched := sc.SGP.LR.Optim()
	lr := h.LR
	if lr == 0 {
		lr = sched.At(sc.SGP.Rounds - 1)
	}
	cfg := &optim.PDBOConfig{N: sc.Nodes(), SGP: optim.SGPConfig{Variant: variant, LR: sched, BatchSize: sc.SGP.Batch},
		Alpha: h.Alpha, Beta: h.Beta, Sampling: sampling, HyperBatch: h.Batch, HyperLR: lr,
		OuterVal: h.OuterData == "val", Seed: sc.Seed, Warm: !sc.Outer.Restart}
	if h.Estimator != "none" {
		cfg.Estimator = h.Estimator
		cfg.NewOptimizer = func() optim.OuterOptimizer { return outerOptimizer(sc) }
	}
	return cfg
}

// Factory returns the function that builds client i of the run (the
// algorithm's client with the scenario's faults).
func (r *Run) Factory() optim.ClientFactory { return r.factory }

// Program returns the run's schedule.
func (r *Run) Program() optim.Program { return r.program }

// faults returns the faults of client i, in the order the scenario lists
// them.
func (r *Run) faults(i int) []optim.Fault {
	var out []optim.Fault
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

// pdboProgram is the schedule of a pdbo run: Alg. 1.
func (r *Run) pdboProgram() *optim.Alg1 {
	sc := r.Scenario
	h := sc.Hypergradient
	a := &optim.Alg1{Steps: sc.Outer.Steps, SGPRounds: sc.SGP.Rounds, SGPEval: sc.SGP.EvalEvery,
		Warm: !sc.Outer.Restart, Patience: sc.Outer.Patience, Track: sc.Nodes() <= scenarios.ExactEstimateLimit}
	if h.Estimator != "none" {
		kind, _ := optim.Estimators.Lookup(h.Estimator)
		a.Hyper, a.HyperEval = true, h.EvalEvery
		a.HyperRounds = kind.New().Rounds(h.M, r.Config.Sampling)
		a.ReportState = h.Oracle
	}
	return a
}

// isolated is the network of the Local baselines: self-loops only. It does
// not satisfy Assumption 2 and is built without graph.Build on purpose.
func isolated(n int) *graph.Network {
	p := make([][]float64, n)
	for i := range p {
		p[i] = make([]float64, n)
		p[i][i] = 1
	}
	return &graph.Network{Kind: "local", N: n, Prob: p, Symmetric: true}
}

// bilevelModel builds the model of a validated scenario.
func bilevelModel(sc scenarios.Scenario) models.Bilevel {
	features, classes := sc.Shape()
	arch := sc.Model.Arch.Params
	return sc.Model.Head.Params.New(func() models.Classifier { return arch.New(features, classes) }, sc.Model.HeadParams())
}

// outerData is the data of client i's outer cost F_i.
func (r *Run) outerData(i int) *models.Dataset {
	if r.Scenario.Hypergradient.OuterData == "val" {
		return r.Data[i].Val
	}
	return r.Data[i].Train
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

// outerOptimizer builds one client's λ-optimizer with per-coordinate rates:
// the label part of ensemble-label-weights (λ = [λ^K; λ^C]) uses lr_labels.
func outerOptimizer(sc scenarios.Scenario) optim.OuterOptimizer {
	_, classes := sc.Shape()
	dl := sc.Model.Head.Params.DimLambda(classes, sc.Model.HeadParams())
	lr := make([]float64, dl)
	for k := range lr {
		lr[k] = sc.Outer.LR
		if sc.Model.Head.Name == "ensemble-label-weights" && k >= sc.Model.K {
			lr[k] = sc.Outer.LRLabels
		}
	}
	if sc.Outer.Optimizer == "sgd" {
		return &optim.SGD{LR: lr}
	}
	return &optim.Adam{LR: lr, Beta1: sc.Outer.Beta1, Beta2: sc.Outer.Beta2, Eps: sc.Outer.Eps}
}
