package graph

import (
	"fmt"

	"hgpsim/internal/registry"
)

// testSpec is a compact table form for tests: one struct for every kind,
// turned into the kind's own parameters by buildSpec.
type testSpec struct {
	Kind                string
	N                   int
	EdgeProb            float64
	Weights             string
	DeltaMin, DeltaMax  float64
	Prob                float64
	Directed, Symmetric bool
	Edges               []Edge
	Burst               int
	Rows                int    // torus
	Support             string // sparse-stochastic: ring or torus
}

func (s testSpec) topology() (registry.Choice[Topology], error) {
	links := defaultLinks()
	if s.Burst > 1 {
		links.Process = registry.Choice[LinkProcess]{Name: "burst", Params: &Burst{Length: s.Burst}}
	}
	var t Topology
	switch s.Kind {
	case "fully-connected":
		t = &FullyConnected{}
	case "static-undirected":
		w := s.Weights
		if w == "" {
			w = "fmmc"
		}
		t = &StaticUndirected{EdgeProb: s.EdgeProb, Weights: w}
	case "stochastic-directed", "stochastic-undirected":
		t = &Stochastic{DeltaMin: s.DeltaMin, DeltaMax: s.DeltaMax, Directed: s.Kind == "stochastic-directed", RandomLinks: links}
	case "ring":
		t = &Ring{Prob: s.Prob, Directed: s.Directed, RandomLinks: links}
	case "star":
		t = &Star{Prob: s.Prob, RandomLinks: links}
	case "edge-list":
		t = &EdgeList{Symmetric: s.Symmetric, Edges: s.Edges, RandomLinks: links}
	case "torus":
		t = &Torus{Rows: s.Rows, Prob: s.Prob, RandomLinks: links}
	case "hypercube":
		t = &Hypercube{Prob: s.Prob, RandomLinks: links}
	case "sparse-stochastic":
		var sup Topology = &Ring{Prob: 1, RandomLinks: defaultLinks()}
		if s.Support == "torus" {
			sup = &Torus{Prob: 1, RandomLinks: defaultLinks()}
		}
		t = &SparseStochastic{Support: registry.Choice[Topology]{Name: s.Support, Params: sup}, DeltaMin: s.DeltaMin, DeltaMax: s.DeltaMax, Directed: s.Directed, RandomLinks: links}
	default:
		return registry.Choice[Topology]{}, fmt.Errorf("unknown kind %q", s.Kind)
	}
	return registry.Choice[Topology]{Name: s.Kind, Params: t}, nil
}

func buildSpec(s testSpec, seed uint64) (*Network, error) {
	t, err := s.topology()
	if err != nil {
		return nil, err
	}
	return Build(t, s.N, seed)
}
