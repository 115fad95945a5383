package models

import (
	"hgpsim/datasets"
	"math"
	"testing"
)

// TestMixtureReusesDecodedRowsOnlyForTheSameRows runs one mixture over
// coded datasets and ranges in turn, so that its kept decoded chunk is
// hit and missed, and compares every gradient and product with those of
// a fresh clone, which decodes from scratch.
func TestMixtureReusesDecodedRowsOnlyForTheSameRows(t *testing.T) {
	r := testRand(t, 7)
	const D, C = 5, 3
	small, _ := randomCoded(r, batchChunk-3, D, C)
	other, _ := randomCoded(r, batchChunk-3, D, C)
	big, _ := randomCoded(r, batchChunk+9, D, C)
	bases := []Classifier[float64]{NewSoftmax[float64](D, C, 0.1), NewSoftmax[float64](D, C, 0.2)}
	m := MTLDA(bases, 0.01, 0.001)
	x, lambda := make([]float64, m.DimX()), make([]float64, m.DimLambda())
	m.Init(x, r)
	for i := range lambda {
		lambda[i] = r.NormFloat64()
	}
	u := randomVec(r, m.DimX(), 1)
	lz := m.(Linearizer[float64])
	for step, d := range []*datasets.Dataset{small, small, other, small, big, big, small, other, other, small} {
		fresh := m.Clone()
		batches := [][]int{nil}
		if step == 3 {
			batches = append(batches, []int{2, 0, 2})
		}
		for _, idx := range batches {
			g, want := make([]float64, m.DimX()), make([]float64, m.DimX())
			l, wl := m.InnerGrad(g, x, lambda, d, idx), fresh.InnerGrad(want, x, lambda, d, idx)
			if math.Float64bits(l) != math.Float64bits(wl) || !bitsEqual(g, want) {
				t.Fatalf("step %d, idx %v: gradient differs from a fresh model's", step, idx)
			}
			hv, wantHV := make([]float64, m.DimX()), make([]float64, m.DimX())
			lz.Linearize(x, lambda, d, idx).Products(hv, nil, u)
			fresh.InnerHVP(wantHV, x, lambda, d, idx, u)
			if !bitsEqual(hv, wantHV) {
				t.Fatalf("step %d, idx %v: HVP differs from a fresh model's", step, idx)
			}
		}
	}
}
