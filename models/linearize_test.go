package models

import (
	"math"
	"testing"
)

// TestLinearizedMatchesProducts checks that Products at a fixed point gives
// InnerHVP and InnerCross bit for bit, for several vectors in a row (the
// cached forward pass must be replayed, not stale), for every mixture and
// batch shape, with and without each destination.
func TestLinearizedMatchesProducts(t *testing.T) {
	same := func(what string, got, want []float64) {
		t.Helper()
		for k := range want {
			if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
				t.Fatalf("%s: coordinate %d is %v, want %v", what, k, got[k], want[k])
			}
		}
	}
	linearizers := 0
	for ci, tc := range bilevelCases() {
		lz, ok := tc.b.(Linearizer[float64])
		if !ok {
			continue
		}
		linearizers++
		r := testRand(t, 900+uint64(ci))
		d := tc.ds(r, 19)
		nx, nl := tc.b.DimX(), tc.b.DimLambda()
		ref := tc.b.Clone()
		for bname, idx := range batches(d.N) {
			x := randomVec(r, nx, 1)
			lambda := randomVec(r, nl, 1)
			lin := lz.Linearize(x, lambda, d, idx)
			for call := range 3 {
				what := tc.name + "/" + bname
				u := randomVec(r, nx, 1)
				wantH, wantC := make([]float64, nx), make([]float64, nl)
				ref.InnerHVP(wantH, x, lambda, d, idx, u)
				ref.InnerCross(wantC, x, lambda, d, idx, u)
				h, c := make([]float64, nx), make([]float64, nl)
				switch call {
				case 0:
					lin.Products(h, c, u)
					same(what+" HVP", h, wantH)
					same(what+" cross", c, wantC)
				case 1:
					lin.Products(h, nil, u)
					same(what+" HVP alone", h, wantH)
				case 2:
					// Another call on the model in between must not
					// disturb the fixed point.
					lz.InnerGrad(make([]float64, nx), randomVec(r, nx, 1), randomVec(r, nl, 1), d, nil)
					lin.Products(nil, c, u)
					same(what+" cross alone", c, wantC)
				}
			}
		}
	}
	if linearizers < 5 {
		t.Fatalf("only %d bilevel cases implement Linearizer[float64]", linearizers)
	}
}

// TestLinearizeCachesLinearBases checks that a mixture of linear bases
// (softmax and logistic regression) keeps its forward pass for the phase,
// and one with a nonlinear base (the tanh MLP) does not: without the
// cache a VR-HGP round recomputes every base's logits at every product
// (about 1.5 times the round's time at the benchmark's shape).
func TestLinearizeCachesLinearBases(t *testing.T) {
	r := testRand(t, 31)
	for _, c := range []struct {
		name  string
		bases []Classifier[float64]
		want  bool
	}{
		{"softmax", []Classifier[float64]{NewSoftmax[float64](6, 3, 0.01), NewSoftmax[float64](6, 3, 0.01)}, true},
		{"logistic", []Classifier[float64]{NewLogistic[float64](6, 0.01), NewLogistic[float64](6, 0.01)}, true},
		{"softmax and mlp", []Classifier[float64]{NewSoftmax[float64](6, 3, 0.01), NewMLP[float64](6, 4, 3, 0.01)}, false},
	} {
		b := MTLDA(c.bases, 0.01, 0.01)
		classes := 3
		if c.name == "logistic" {
			classes = 2
		}
		d := batchData(t, 32, 8, 6, classes)
		lin := b.(Linearizer[float64]).Linearize(randomVec(r, b.DimX(), 1), randomVec(r, b.DimLambda(), 1), d, nil)
		if got := lin.(*mixtureLinearized[float64]).cache != nil; got != c.want {
			t.Errorf("%s: forward pass cached %v, want %v", c.name, got, c.want)
		}
	}
}
