package graph

import (
	"math"
	"strings"
	"testing"

	"hgpsim/internal/registry"
)

// toDense returns a copy of nw with its expected graph in Prob only, as a
// Network not made by Build (no adjacency lists).
func toDense(nw *Network) *Network {
	d := *nw
	d.Prob = make([][]float64, nw.N)
	for i := range d.Prob {
		d.Prob[i] = make([]float64, nw.N)
		for j := range d.Prob[i] {
			d.Prob[i][j] = nw.Delta(i, j)
		}
	}
	d.out, d.outProb = nil, nil
	return &d
}

// TestSparseMatchesDense builds every sparse kind on adjacency lists and
// compares it with the same network stored densely: validation,
// realizations (with and without failure processes) and the exact
// expected push weights agree to the bit.
func TestSparseMatchesDense(t *testing.T) {
	for _, spec := range []testSpec{
		{Kind: "ring", N: 7, Prob: 0.6},
		{Kind: "ring", N: 2, Prob: 1},
		{Kind: "torus", N: 12, Prob: 0.7},
		{Kind: "torus", N: 6, Rows: 1, Prob: 0.7},
		{Kind: "star", N: 5, Prob: 0.5},
		{Kind: "hypercube", N: 8, Prob: 0.8},
		{Kind: "edge-list", N: 4, Edges: []Edge{{0, 1, 0.5}, {1, 2, 1}, {2, 3, 0.3}, {3, 0, 0.9}}, Symmetric: true},
		{Kind: "sparse-stochastic", N: 12, Support: "torus", DeltaMin: 0.4, DeltaMax: 0.8},
		{Kind: "sparse-stochastic", N: 9, Support: "ring", DeltaMin: 0.4, DeltaMax: 0.8, Directed: true},
	} {
		nw, err := buildSpec(spec, 5)
		if err != nil {
			t.Fatalf("%s: %v", spec.Kind, err)
		}
		if !nw.IsSparse() {
			t.Fatalf("%s: built densely", spec.Kind)
		}
		d := toDense(nw)
		if err := d.Validate(); err != nil {
			t.Fatalf("%s: dense copy invalid: %v", spec.Kind, err)
		}
		var a, b []int
		for _, failing := range []bool{false, true} {
			if failing {
				// Churn and a partition on both copies: the overlay
				// reads the same links in either storage.
				d.Failures = nil
				for _, x := range []*Network{nw, d} {
					fs := []registry.Choice[Failure]{
						{Name: "churn", Params: &Churn{Share: 0.2, MeanOffline: 3}},
						{Name: "partition", Params: &Partition{Groups: [][]int{{0, 1}}, From: 3, To: 8}},
					}
					if err := x.SetFailures(fs); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i := range nw.N {
				for tick := range uint64(20) {
					a, b = nw.Realize(i, tick, a), d.Realize(i, tick, b)
					if !equalInts(a, b) {
						t.Fatalf("%s (failures %v): client %d tick %d realized %v, dense %v", spec.Kind, failing, i, tick, a, b)
					}
				}
			}
		}
		nw.Failures, d.Failures = nil, nil
		pa, pb := nw.ExpectedPushWeights(), d.ExpectedPushWeights()
		for i := range pa {
			for j := range pa[i] {
				if math.Float64bits(pa[i][j]) != math.Float64bits(pb[i][j]) {
					t.Fatalf("%s: p̄[%d][%d] = %v, dense %v", spec.Kind, i, j, pa[i][j], pb[i][j])
				}
			}
		}
	}
}

// TestSparseValidateErrors corrupts adjacency lists: the checks of the
// dense storage report the same errors.
func TestSparseValidateErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(nw *Network)
		want   string
	}{
		{"range", func(nw *Network) { nw.outProb[1][2] = 1.5 }, "δ̄ of edge 1→2 is 1.5, must be in [0, 1]"},
		{"diagonal", func(nw *Network) { nw.outProb[3][2] = 0.5 }, "δ̄ of self-loop 3→3 is 0.5, must be 1"},
		{"asymmetric", func(nw *Network) { nw.outProb[0][1] = 0.7 }, "symmetric network has δ̄=0.7 on edge 0→1 but δ̄=0.5 on 1→0"},
		{"assumption 6", func(nw *Network) { nw.Symmetric = false; nw.outProb[2][0] = 0 }, "assumption 6 violated: edge 1→2 has δ̄=0.5 but 2→1 has δ̄=0"},
		{"sink", func(nw *Network) { nw.Symmetric = false; nw.outProb[0][1], nw.outProb[0][2] = 0, 0 }, "client 0 cannot reach clients [1 2 3]"},
	} {
		nw, err := buildSpec(testSpec{Kind: "ring", N: 4, Prob: 0.5}, 1)
		if err != nil {
			t.Fatal(err)
		}
		c.break_(nw)
		if err := nw.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want error containing %q", c.name, err, c.want)
		}
	}
}

// TestSparseMillion builds a ring of MaxSparseNodes nodes: no n × n
// structure, so it fits in memory and validates in linear time.
func TestSparseMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("a million-node network")
	}
	nw, err := buildSpec(testSpec{Kind: "sparse-stochastic", N: MaxSparseNodes, Support: "ring", DeltaMin: 0.4, DeltaMax: 0.8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if nw.Prob != nil || nw.Links() != 2*MaxSparseNodes {
		t.Fatalf("Prob nil: %v, links %d, want %d", nw.Prob == nil, nw.Links(), 2*MaxSparseNodes)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}
