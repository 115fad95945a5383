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
	Model    models.Model // prototype; each client holds its own clone
	X0       []float64    // common initial parameters
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
	model := models.NewSoftmax(sc.Data.Features, sc.Data.Classes, sc.Model.L2)
	x0 := make([]float64, model.Dim())
	model.Init(x0, rng.New(sc.Seed, rng.Global, rng.PurposeInit))

	variant := optim.AfterComm
	if sc.SGP.Variant == "before" {
		variant = optim.BeforeComm
	}
	cfg := optim.SGPConfig{Variant: variant, LR: sc.SGP.LR.schedule(), BatchSize: sc.SGP.Batch}
	clients := make([]*optim.SGP, sc.Clients)
	for i := range clients {
		clients[i] = optim.NewSGP(i, sc.Clients, model.Clone(), data[i], x0, cfg, sc.Seed)
	}
	return &Run{Scenario: sc, Net: nw, Data: data, Model: model, X0: x0, SGP: clients}, nil
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
		r.Scenario.Name, r.Scenario.Clients, r.Net.Kind, r.Scenario.Model.Kind, r.Model.Dim(), r.Scenario.SGP.Rounds)
}
