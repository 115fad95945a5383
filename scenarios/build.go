package scenarios

import (
	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// Run is a scenario turned into objects: the network, each client's data
// and behaviour. It is built once and run once.
type Run struct {
	Scenario Scenario
	Net      *graph.Network
	Data     []models.ClientData
	Model    models.Bilevel // prototype; each client holds its own clone
	X0       []float64      // common initial parameters
	Lambda   [][]float64    // each client's hyperparameters
	Models   []models.Bilevel
	SGP      []*optim.SGP
	sgpCfg   optim.SGPConfig
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
// (for example a disconnected expected graph) are InvalidErrors.
func Build(sc Scenario) (*Run, error) {
	if err := sc.Validate(); err != nil {
		return nil, invalid("scenario", "%s", err.Error())
	}
	nw, err := buildNetwork(sc)
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

	variant := optim.AfterComm
	if sc.SGP.Variant == "before" {
		variant = optim.BeforeComm
	}
	cfg := optim.SGPConfig{Variant: variant, LR: sc.SGP.LR.schedule(), BatchSize: sc.SGP.Batch}
	if sc.isLocal() {
		nw = isolated(sc.Clients)
	}
	r := &Run{Scenario: sc, Net: nw, Data: data, Model: model, X0: x0, sgpCfg: cfg,
		Lambda: make([][]float64, sc.Clients), Models: make([]models.Bilevel, sc.Clients)}
	for i := range r.Lambda {
		r.Lambda[i] = make([]float64, model.DimLambda()) // λ⁽⁰⁾ = 0, as in the paper
		r.Models[i] = model.Clone()
	}
	r.restartSGP(false)
	return r, nil
}

// restartSGP builds fresh SGP clients with the current λ, starting from the
// common initial parameters or (warm) from each client's last x_i.
func (r *Run) restartSGP(warm bool) {
	n := r.Scenario.Clients
	next := make([]*optim.SGP, n)
	for i := range next {
		start := r.X0
		if warm && r.SGP != nil {
			start = r.SGP[i].X()
		}
		next[i] = optim.NewSGPBilevel(i, n, r.Models[i], r.Lambda[i], r.Data[i], start, r.sgpCfg, r.Scenario.Seed)
		if r.Scenario.Hypergradient.Estimator != "none" {
			next[i].SetOuterData(r.outerData(i))
		}
	}
	r.SGP = next
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

// buildNetwork builds the scenario's network; a network that breaks an
// assumption is an input error.
func buildNetwork(sc Scenario) (*graph.Network, error) {
	nw, err := graph.Build(sc.Network.Topology, sc.Clients, sc.Seed)
	if err != nil {
		return nil, invalid("scenario", "network: %s", err.Error())
	}
	return nw, nil
}

// bilevelModel builds the model of a validated scenario.
func bilevelModel(sc Scenario) models.Bilevel {
	features, classes := sc.shape()
	arch := sc.Model.Arch.Params
	return sc.Model.Head.Params.New(func() models.Classifier { return arch.New(features, classes) }, sc.Model.headParams())
}

// HypergradientPhase linearizes every client at its current SGP state and
// returns the estimator phase configured by the scenario. lr is the step of
// the linearized map.
func (r *Run) HypergradientPhase(lr float64) (*optim.Phase, []optim.HyperEstimator, []optim.Linearization) {
	h := r.Scenario.Hypergradient
	n := r.Scenario.Clients
	var pTrue [][]float64
	if h.Estimates == "true" {
		pTrue = r.expectedPushWeights()
	}
	sampling := optim.Simultaneous
	if h.Sampling == "alternate" {
		sampling = optim.Alternate
	}
	lins := make([]optim.Linearization, n)
	est := make([]optim.HyperEstimator, n)
	beh := make([]optim.Behaviour, n)
	for i, c := range r.SGP {
		lin := c.Linearize(r.outerData(i), lr, h.Batch, r.Scenario.Seed)
		if h.Estimates == "true" {
			lin.PBar = pTrue[i]
			for j := range lin.DeltaBar {
				lin.DeltaBar[j] = r.Net.Prob[j][i]
			}
		}
		lins[i] = lin
		switch h.Estimator {
		case "hgp":
			est[i] = optim.NewHGP(lin, sampling)
		case "vr-hgp":
			est[i] = optim.NewVRHGP(lin, h.Alpha, h.Beta, sampling)
		case "exact":
			est[i] = optim.NewExactBackprop(lin, sampling)
		default:
			est[i] = optim.NewLocalHypergradient(lin)
		}
		beh[i] = est[i]
	}
	rounds := sampling.Rounds(h.M)
	if h.Estimator == "local" {
		rounds = 0
	}
	return &optim.Phase{Name: "hypergradient", Rounds: rounds, Clients: beh, EvalEvery: h.EvalEvery}, est, lins
}

// SGPPhase returns the inner phase of the run.
func (r *Run) SGPPhase() *optim.Phase {
	b := make([]optim.Behaviour, len(r.SGP))
	for i, c := range r.SGP {
		b[i] = c
	}
	return &optim.Phase{Name: "sgp", Rounds: r.Scenario.SGP.Rounds, Clients: b, EvalEvery: r.Scenario.SGP.EvalEvery}
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
func loadData(sc Scenario) ([]models.ClientData, error) {
	src := sc.Data.Source.Params
	if m, ok := src.(interface{ Missing() []string }); ok && len(m.Missing()) > 0 {
		_, err := src.Load(sc.Clients, sc.Seed) // its error names the files and how to install them
		return nil, invalid("scenario", "data: %s", err.Error())
	}
	data, err := src.Load(sc.Clients, sc.Seed)
	if err != nil {
		return nil, invalid("scenario", "data (%s): %s", sc.Data.Source.Name, err.Error())
	}
	return data, nil
}
