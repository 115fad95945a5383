package graph

import (
	"math"
	"strings"
	"testing"
)

func TestBuildErrors(t *testing.T) {
	nan := math.NaN()
	sd := func(lo, hi float64) testSpec {
		return testSpec{Kind: "stochastic-directed", N: 4, DeltaMin: lo, DeltaMax: hi}
	}
	el := func(sym bool, e ...Edge) testSpec { return testSpec{Kind: "edge-list", N: 4, Symmetric: sym, Edges: e} }
	for _, c := range []struct {
		name string
		spec testSpec
		want string
	}{
		{"n=1", testSpec{Kind: "fully-connected", N: 1}, "n must be in [2, 10000], got 1"},
		{"n negative", testSpec{Kind: "ring", N: -3, Prob: 1}, "n must be in [2, 1000000], got -3"},
		{"n huge", testSpec{Kind: "ring", N: 1 << 20, Prob: 1}, "n must be in [2, 1000000], got 1048576"},
		{"n huge dense", testSpec{Kind: "stochastic-directed", N: 10001, DeltaMin: 0.5, DeltaMax: 0.5}, "n must be in [2, 10000], got 10001 (kind stochastic-directed)"},
		{"edge_prob 0", testSpec{Kind: "static-undirected", N: 5, EdgeProb: 0}, "edge_prob must be in (0, 1], got 0"},
		{"edge_prob >1", testSpec{Kind: "static-undirected", N: 5, EdgeProb: 1.2}, "edge_prob must be in (0, 1], got 1.2"},
		{"edge_prob NaN", testSpec{Kind: "static-undirected", N: 5, EdgeProb: nan}, "edge_prob must be in (0, 1], got NaN"},
		{"weights", testSpec{Kind: "static-undirected", N: 5, EdgeProb: 0.5, Weights: "max-degree"}, `weights must be "fmmc" or "metropolis", got "max-degree"`},
		{"never connected", testSpec{Kind: "static-undirected", N: 60, EdgeProb: 0.001}, "no connected Erdős–Rényi graph with n=60 and edge_prob=0.001"},
		{"delta_min 0", sd(0, 0.8), "delta_min must be in (0, 1], got 0"},
		{"delta_min 1.5", sd(1.5, 1.5), "delta_min must be in (0, 1], got 1.5"},
		{"delta_min NaN", sd(nan, 0.8), "delta_min must be in (0, 1], got NaN"},
		{"delta_max < min", sd(0.6, 0.5), "delta_max must be in [delta_min, 1] = [0.6, 1], got 0.5"},
		{"delta_max > 1", testSpec{Kind: "stochastic-undirected", N: 4, DeltaMin: 0.4, DeltaMax: 1.1}, "delta_max must be in [delta_min, 1] = [0.4, 1], got 1.1"},
		{"ring prob 0", testSpec{Kind: "ring", N: 4}, "prob must be in (0, 1], got 0"},
		{"star prob >1", testSpec{Kind: "star", N: 4, Prob: 2}, "prob must be in (0, 1], got 2"},
		{"no edges", el(false), "edges: an edge-list network needs at least one edge"},
		{"edge index", el(false, Edge{0, 4, 1}), "edges[0] 0→4: client 4 is not in [0, 4)"},
		{"edge negative", el(true, Edge{0, 1, 1}, Edge{-1, 2, 1}), "edges[1] -1→2: client -1 is not in [0, 4)"},
		{"self edge", el(false, Edge{2, 2, 1}), "edges[0] is a self edge 2→2"},
		{"edge prob", el(false, Edge{0, 1, 0}), "edges[0] 0→1: prob must be in (0, 1], got 0"},
		{"duplicate", el(false, Edge{0, 1, 1}, Edge{1, 0, 1}, Edge{0, 1, 0.5}), "edges[2] 0→1 duplicates edges[0]"},
		{"symmetric duplicate", el(true, Edge{0, 1, 1}, Edge{1, 0, 1}), "edges[1] 1→0 duplicates edges[0]"},
		{"disconnected edge list", el(true, Edge{0, 1, 1}, Edge{2, 3, 0.5}),
			"graph: expected graph is not strongly connected: clients [2 3] cannot reach client 0"},
		{"one-way edge list", el(false, Edge{0, 1, 1}, Edge{1, 2, 1}, Edge{2, 3, 1}, Edge{3, 0, 1}, Edge{1, 0, 0.5}, Edge{2, 1, 1}, Edge{3, 2, 1}),
			"graph: assumption 6 violated: edge 3→0 has δ̄=1 but 0→3 has δ̄=0"},
		{"directed ring", testSpec{Kind: "ring", N: 5, Prob: 0.9, Directed: true},
			"graph: assumption 6 violated: edge 0→1 has δ̄=0.9 but 1→0 has δ̄=0"},
	} {
		nw, err := buildSpec(c.spec, 3)
		if err == nil {
			t.Errorf("%s: Build succeeded, want error containing %q", c.name, c.want)
			continue
		}
		if nw != nil {
			t.Errorf("%s: Build returned a network with its error", c.name)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	// ring returns a valid 4-client undirected ring to corrupt, stored
	// densely.
	ring := func() *Network {
		nw, err := buildSpec(testSpec{Kind: "ring", N: 4, Prob: 0.5}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return toDense(nw)
	}
	if err := ring().Validate(); err != nil {
		t.Fatalf("valid ring: %v", err)
	}
	for _, c := range []struct {
		name   string
		break_ func(nw *Network)
		want   string
	}{
		{"n", func(nw *Network) { nw.N = 1 }, "n must be at least 2"},
		{"rows", func(nw *Network) { nw.Prob = nw.Prob[:3] }, "Prob has 3 rows, want n=4"},
		{"cols", func(nw *Network) { nw.Prob[2] = nw.Prob[2][:2] }, "Prob row 2 has 2 entries"},
		{"range", func(nw *Network) { nw.Prob[1][2] = 1.5 }, "δ̄ of edge 1→2 is 1.5, must be in [0, 1]"},
		{"NaN", func(nw *Network) { nw.Prob[1][3] = math.NaN() }, "δ̄ of edge 1→3 is NaN"},
		{"diagonal", func(nw *Network) { nw.Prob[3][3] = 0.5 }, "δ̄ of self-loop 3→3 is 0.5, must be 1"},
		{"asymmetric", func(nw *Network) { nw.Prob[0][1] = 0.7 }, "symmetric network has δ̄=0.7 on edge 0→1 but δ̄=0.5 on 1→0"},
		{"assumption 6", func(nw *Network) { nw.Symmetric = false; nw.Prob[2][1] = 0 }, "assumption 6 violated: edge 1→2 has δ̄=0.5 but 2→1 has δ̄=0"},
		{"cut", func(nw *Network) {
			nw.Prob[1][2], nw.Prob[2][1], nw.Prob[3][0], nw.Prob[0][3] = 0, 0, 0, 0
		}, "clients [2 3] cannot reach client 0"},
		{"sink", func(nw *Network) {
			nw.Symmetric = false
			nw.Prob[0][1], nw.Prob[0][3] = 0, 0
		}, "client 0 cannot reach clients [1 2 3]"},
		{"mixing with random links", func(nw *Network) {
			nw.Mixing = identity(4)
		}, "fixed mixing weights need deterministic links, but edge 0→1 has δ̄=0.5"},
	} {
		nw := ring()
		c.break_(nw)
		err := nw.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want error containing %q", c.name, err, c.want)
		}
	}

	fc, err := buildSpec(testSpec{Kind: "fully-connected", N: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		break_ func(m [][]float64)
		want   string
	}{
		{"negative", func(m [][]float64) { m[0][1], m[0][0] = -0.1, m[0][0]+0.1+1.0/3 }, "mixing weight 0→1 is -0.1"},
		{"row sum", func(m [][]float64) { m[2][1] = 0.5 }, "mixing weights of sender 2 sum to"},
	} {
		nw := *fc
		nw.Mixing = identity(3)
		for i := range nw.Mixing {
			for j := range nw.Mixing[i] {
				nw.Mixing[i][j] = 1.0 / 3
			}
		}
		c.break_(nw.Mixing)
		if err := nw.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want error containing %q", c.name, err, c.want)
		}
	}
	// Mixing on a missing link.
	nw := ring()
	nw.Mixing = identity(4)
	for i := range 4 {
		for j := range 4 {
			if nw.Delta(i, j) > 0 {
				nw.Prob[i][j] = 1
			}
		}
	}
	nw.Mixing[0][0], nw.Mixing[0][2] = 0.5, 0.5
	if err := nw.Validate(); err == nil || !strings.Contains(err.Error(), "mixing weight 0→2 is 0.5 but the link does not exist") {
		t.Errorf("mixing off the graph: Validate() = %v", err)
	}
}

func TestBuildKinds(t *testing.T) {
	const n = 6
	for _, c := range []struct {
		spec      testSpec
		symmetric bool
		mixing    bool
		links     func(i, j int) bool // which off-diagonal δ̄ are positive
		prob      func(p float64) bool
	}{
		{testSpec{Kind: "fully-connected", N: n}, true, true, func(i, j int) bool { return true }, func(p float64) bool { return p == 1 }},
		{testSpec{Kind: "stochastic-directed", N: n, DeltaMin: 0.4, DeltaMax: 0.8}, false, false,
			func(i, j int) bool { return true }, func(p float64) bool { return p >= 0.4 && p <= 0.8 }},
		{testSpec{Kind: "stochastic-undirected", N: n, DeltaMin: 0.5, DeltaMax: 0.5}, true, false,
			func(i, j int) bool { return true }, func(p float64) bool { return p == 0.5 }},
		{testSpec{Kind: "ring", N: n, Prob: 0.3}, true, false,
			func(i, j int) bool { return (i-j+n)%n == 1 || (j-i+n)%n == 1 }, func(p float64) bool { return p == 0.3 }},
		{testSpec{Kind: "ring", N: 2, Prob: 0.3, Directed: true}, false, false,
			func(i, j int) bool { return true }, func(p float64) bool { return p == 0.3 }},
		{testSpec{Kind: "star", N: n, Prob: 1}, true, false,
			func(i, j int) bool { return i == 0 || j == 0 }, func(p float64) bool { return p == 1 }},
		{testSpec{Kind: "static-undirected", N: n, EdgeProb: 1}, true, true,
			func(i, j int) bool { return true }, func(p float64) bool { return p == 1 }},
	} {
		nw, err := buildSpec(c.spec, 5)
		if err != nil {
			t.Fatalf("%+v: %v", c.spec, err)
		}
		if nw.Kind != c.spec.Kind || nw.N != c.spec.N || nw.Seed != 5 {
			t.Errorf("%s: Kind %q N %d Seed %d", c.spec.Kind, nw.Kind, nw.N, nw.Seed)
		}
		if nw.Symmetric != c.symmetric || (nw.Mixing != nil) != c.mixing {
			t.Errorf("%s: Symmetric=%v Mixing set=%v, want %v %v", c.spec.Kind, nw.Symmetric, nw.Mixing != nil, c.symmetric, c.mixing)
		}
		for i := range nw.N {
			for j := range nw.N {
				p := nw.Delta(i, j)
				switch {
				case i == j:
				case c.links(i, j) && !c.prob(p):
					t.Errorf("%s: δ̄[%d][%d] = %v out of expected range", c.spec.Kind, i, j, p)
				case !c.links(i, j) && p != 0:
					t.Errorf("%s: δ̄[%d][%d] = %v, want no link", c.spec.Kind, i, j, p)
				}
			}
		}
	}

	// The topology is a function of the seed: same seed, same δ̄; another
	// seed, different δ̄.
	spec := testSpec{Kind: "stochastic-directed", N: 5, DeltaMin: 0.4, DeltaMax: 0.8}
	a, _ := buildSpec(spec, 11)
	b, _ := buildSpec(spec, 11)
	c, _ := buildSpec(spec, 12)
	if a.Delta(1, 2) != b.Delta(1, 2) || a.Delta(3, 4) != b.Delta(3, 4) {
		t.Error("same seed gave different δ̄")
	}
	if a.Delta(1, 2) == c.Delta(1, 2) {
		t.Error("different seeds gave the same δ̄")
	}
	// In the directed kind the two directions of a pair are drawn apart.
	if a.Delta(1, 2) == a.Delta(2, 1) {
		t.Error("stochastic-directed δ̄ is symmetric")
	}
}
