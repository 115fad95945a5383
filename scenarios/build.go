package scenarios

import (
	"fmt"

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
	nw, err := graph.Build(networkSpec(sc), sc.Seed)
	if err != nil {
		return nil, invalid("scenario", "network: %s", err.Error())
	}
	data, err := loadData(&sc)
	if err != nil {
		return nil, err
	}
	if sc.Hypergradient.Estimator == "exact" && !nw.Symmetric {
		return nil, invalid("scenario", "hypergradient.estimator: exact recurrent backpropagation (Eq. 11) needs undirected links, and a %s network is directed; use hgp or vr-hgp", nw.Kind)
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

// bilevelModel builds the model of a validated scenario.
func bilevelModel(sc Scenario) models.Bilevel {
	m := sc.Model
	var base models.Classifier
	switch m.Kind {
	case "logistic":
		base = models.NewLogistic(sc.Data.Features, m.L2)
	case "mlp":
		base = models.NewMLP(sc.Data.Features, m.Hidden, sc.Data.Classes, m.L2)
	default:
		base = models.NewSoftmax(sc.Data.Features, sc.Data.Classes, m.L2)
	}
	bases := make([]models.Classifier, m.K)
	for k := range bases {
		bases[k] = base
	}
	switch m.Head {
	case "label-weights":
		return models.LabelWeights(base, m.OuterL2)
	case "ensemble":
		return models.Ensemble(bases, m.OuterL2)
	case "ensemble-label-weights":
		return models.MTLDA(bases, m.OuterL2, m.OuterL2Labels)
	}
	return models.Plain(base)
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

func networkSpec(sc Scenario) graph.Spec {
	n := sc.Network
	edges := make([]graph.Edge, len(n.Edges))
	for k, e := range n.Edges {
		edges[k] = graph.Edge{From: e.From, To: e.To, Prob: e.Prob}
	}
	return graph.Spec{Kind: n.Kind, N: sc.Clients, EdgeProb: n.EdgeProb, Weights: n.Weights,
		DeltaMin: n.DeltaMin, DeltaMax: n.DeltaMax, Prob: n.Prob, Directed: n.Directed,
		Edges: edges, Symmetric: n.Symmetric, Burst: n.Burst}
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

// loadData builds every client's splits. For real data sets it also sets
// data.features and data.classes from the files, so the model matches them.
func loadData(sc *Scenario) ([]models.ClientData, error) {
	d := &sc.Data
	if d.Kind == "synthetic" {
		data, err := models.Synthetic(models.SyntheticSpec{
			Clients: sc.Clients, Classes: d.Classes, Features: d.Features,
			Train: d.Train, Val: d.Val, Test: d.Test,
			Alpha: d.Alpha, Separation: d.Separation, Shift: d.Shift, Noise: d.Noise,
		}, sc.Seed)
		if err != nil {
			return nil, invalid("scenario", "data: %s", err.Error())
		}
		return data, nil
	}
	var src models.IDXSource
	switch d.Kind {
	case "fashion-mnist":
		src = models.FashionMNIST(d.Dir)
	case "mnist":
		src = models.MNIST(d.Dir)
	default:
		src = models.EMNIST(d.Dir, d.Split)
	}
	if missing := src.Missing(); len(missing) > 0 {
		_, _, err := src.Load() // its error names the files and how to install them
		return nil, invalid("scenario", "data: %s", err.Error())
	}
	train, test, err := src.Load()
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", d.Kind, err)
	}
	data, err := models.Partition(models.PartitionSpec{Clients: sc.Clients, Fraction: d.Fraction,
		Alpha: d.Alpha, Clusters: d.Clusters, TestFrac: d.TestFrac, TrainFrac: d.TrainFrac}, train, test, sc.Seed)
	if err != nil {
		return nil, invalid("scenario", "data: %s", err.Error())
	}
	for i, c := range data {
		if c.Train.N == 0 || c.Val.N == 0 || c.Test.N == 0 {
			return nil, invalid("scenario", "data: client %d got %d/%d/%d train/val/test examples; use fewer clients or a larger fraction", i, c.Train.N, c.Val.N, c.Test.N)
		}
	}
	d.Features, d.Classes = train.D, train.C
	return data, nil
}
