package scenarios

import (
	"fmt"

	"hgpsim/internal/registry"
	"hgpsim/models"
)

// Method is a preset of `method:`: it fills in the head, the
// hyper-gradient estimator and the outer loop of one of the PDBO paper's
// approaches or baselines. See Methods.
type Method interface {
	// Apply sets the preset's fields of sc (the preset wins over the file).
	Apply(sc *Scenario) error
	// Isolated reports a method that trains without communication.
	Isolated() bool
}

// Methods holds the presets of `method:`.
var Methods = registry.New[Method]("method", "method")

// MethodOrder is the order of the PDBO paper's tables.
var MethodOrder = []string{"local", "sgp", "local-mtl", "sgp-mtl", "pdbo-da", "pdbo-mtl", "pdbo-mtl-da", "pdbo-mtl-local"}

func init() {
	for _, p := range []struct {
		name, doc string
		m         *preset
	}{
		{"local", "Baseline: every client trains alone (self-loops only), no hyperparameters.",
			&preset{head: "none", isolated: true}},
		{"sgp", "Baseline: SGP over the scenario's network (FedAvg on fully-connected, DSGD on static undirected), no hyperparameters.",
			&preset{head: "none"}},
		{"local-mtl", "Baseline: local training of an ensemble with uniform weights.",
			&preset{head: "ensemble", isolated: true}},
		{"sgp-mtl", "Baseline: SGP on an ensemble with uniform weights.",
			&preset{head: "ensemble"}},
		{"pdbo-da", "PDBO-DA: label weights λ_i tuned by the outer loop (Alg. 1) with the auto estimator (HGP on fully-connected and static networks, VR-HGP otherwise).",
			&preset{head: "label-weights", estimator: "auto", outer: true}},
		{"pdbo-mtl", "PDBO-MTL: ensemble weights λ_i tuned by the outer loop with the auto estimator.",
			&preset{head: "ensemble", estimator: "auto", outer: true}},
		{"pdbo-mtl-da", "PDBO-MTL&DA: ensemble and label weights tuned together.",
			&preset{head: "ensemble-label-weights", estimator: "auto", outer: true}},
		{"pdbo-mtl-local", "PDBO-MTL (local), the cooperative paper's baseline: ensemble weights tuned with ∂_λF̄ alone, without communication of u.",
			&preset{head: "ensemble", estimator: "local", outer: true}},
	} {
		m := p.m
		Methods.Register(p.name, p.doc, func() Method { c := *m; return &c })
	}
}

// preset is the shape of every method of the paper.
type preset struct {
	head      string
	estimator string // "": none; "auto" keeps an explicit hgp, vr-hgp or exact
	outer     bool   // needs outer steps
	isolated  bool
}

func (p *preset) Isolated() bool { return p.isolated }

func (p *preset) Apply(sc *Scenario) error {
	sc.Model.Head = registry.Choose[models.Head](p.head)
	switch p.estimator {
	case "":
		sc.Hypergradient.Estimator, sc.Outer.Steps = "none", 0
	case "auto":
		if sc.Hypergradient.Estimator == "none" || sc.Hypergradient.Estimator == "local" {
			sc.Hypergradient.Estimator = "auto"
		}
	default:
		sc.Hypergradient.Estimator = p.estimator
	}
	if p.outer && sc.Outer.Steps < 1 {
		return fmt.Errorf("outer.steps: method %s needs at least one outer step, got %d", sc.Method, sc.Outer.Steps)
	}
	return nil
}
