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
	SGP      []*optim.SGP
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
	data, err := models.Synthetic(models.SyntheticSpec{
		Clients: sc.Clients, Classes: sc.Data.Classes, Features: sc.Data.Features,
		Train: sc.Data.Train, Val: sc.Data.Val, Test: sc.Data.Test,
		Alpha: sc.Data.Alpha, Separation: sc.Data.Separation, Shift: sc.Data.Shift, Noise: sc.Data.Noise,
	}, sc.Seed)
	if err != nil {
		return nil, invalid("scenario", "data: %s", err.Error())
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
	clients := make([]*optim.SGP, sc.Clients)
	lambda := make([][]float64, sc.Clients)
	for i := range clients {
		lambda[i] = make([]float64, model.DimLambda()) // λ⁽⁰⁾ = 0, as in the paper
		clients[i] = optim.NewSGPBilevel(i, sc.Clients, model.Clone(), lambda[i], data[i], x0, cfg, sc.Seed)
	}
	return &Run{Scenario: sc, Net: nw, Data: data, Model: model, X0: x0, Lambda: lambda, SGP: clients}, nil
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
	pTrue := r.Net.ExpectedPushWeights()
	sampling := optim.Simultaneous
	if h.Sampling == "alternate" {
		sampling = optim.Alternate
	}
	lins := make([]optim.Linearization, n)
	est := make([]optim.HyperEstimator, n)
	beh := make([]optim.Behaviour, n)
	for i, c := range r.SGP {
		outer := r.Data[i].Train
		if h.OuterData == "val" {
			outer = r.Data[i].Val
		}
		lin := c.Linearize(outer, lr, h.Batch, r.Scenario.Seed)
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
		Edges: edges, Symmetric: n.Symmetric}
}

// SGPPhase returns the inner phase of the run.
func (r *Run) SGPPhase() *optim.Phase {
	b := make([]optim.Behaviour, len(r.SGP))
	for i, c := range r.SGP {
		b[i] = c
	}
	return &optim.Phase{Name: "sgp", Rounds: r.Scenario.SGP.Rounds, Clients: b, EvalEvery: r.Scenario.SGP.EvalEvery}
}

// describe is a one-line summary for logs.
func (r *Run) describe() string {
	return fmt.Sprintf("%s: %d clients, %s network, %s model (d=%d), %d SGP rounds",
		r.Scenario.Name, r.Scenario.Clients, r.Net.Kind, r.Scenario.Model.Kind, r.Model.DimX(), r.Scenario.SGP.Rounds)
}
