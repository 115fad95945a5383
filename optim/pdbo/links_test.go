package pdbo

import (
	"math"
	"testing"

	"hgpsim/graph"
)

// sparseLin returns lin with p̄ and δ̄ kept for the j where either is not 0
// (and one j where both are, which must change nothing), as a client of a
// large network holds them.
func sparseLin(lin Linearization[float64]) Linearization[float64] {
	var links []int
	var p, d []float64
	for j := range lin.N {
		if lin.PBar[j] != 0 || lin.DeltaBar[j] != 0 || j == (lin.ID+1)%lin.N {
			links, p, d = append(links, j), append(p, lin.PBar[j]), append(d, lin.DeltaBar[j])
		}
	}
	lin.Links, lin.PBar, lin.DeltaBar = links, p, d
	return lin
}

// The estimators give the same bits from per-link p̄ and δ̄ as from
// n-vectors: a client of a sparse network keeps O(degree) numbers.
func TestEstimatorsPerLinkMatchDense(t *testing.T) {
	spec := netSpec{Name: "static-undirected", Params: &graph.StaticUndirected{EdgeProb: 0.4, Weights: "metropolis"}}
	for name, mk := range map[string]func(Linearization[float64]) HyperEstimator{
		"hgp":    func(l Linearization[float64]) HyperEstimator { return NewHGP(l, Simultaneous) },
		"vr-hgp": func(l Linearization[float64]) HyperEstimator { return NewVRHGP(l, 0.9, 0.1, Alternate) },
		"exact":  func(l Linearization[float64]) HyperEstimator { return NewExactBackprop(l, Simultaneous) },
	} {
		t.Run(name, func(t *testing.T) {
			p := newHyperProblem(t, spec, 9, AfterComm, 0.1, 3)
			dense, sparse := make([]HyperEstimator, 9), make([]HyperEstimator, 9)
			links := 0
			for i, l := range p.lins {
				s := sparseLin(l)
				links += len(s.Links)
				dense[i], sparse[i] = mk(l), mk(s)
			}
			if links >= 9*9 {
				t.Fatalf("the test network is complete (%d links): nothing is sparse", links)
			}
			want := runEstimators(t, p.nw, dense, 12)
			got := runEstimators(t, p.nw, sparse, 12)
			for i := range want {
				for k := range want[i] {
					if math.Float64bits(got[i][k]) != math.Float64bits(want[i][k]) {
						t.Fatalf("client %d, entry %d: %v per link, %v dense", i, k, got[i][k], want[i][k])
					}
				}
			}
		})
	}
}
