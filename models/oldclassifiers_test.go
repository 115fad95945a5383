package models

import (
	"fmt"
	"testing"

	"hgpsim/datasets"
)

// The nn presets against the hand-written models they replace
// (oldclassifiers_ref_test.go), bit for bit: Init, Loss, Grad, HVP and
// Accuracy, and every Bilevel product of the heads (label weights,
// ensemble, MTL&DA) and of the per-sample weighted loss over them, on
// minibatches and on full batches longer than one chunk, at shapes that
// take every branch of the dense layer (more than 128 and 256 outputs).
func TestPresetsMatchHandWrittenModels(t *testing.T) {
	type pair struct {
		name     string
		got, old func() Classifier
		classes  int
	}
	var pairs []pair
	for _, s := range []struct{ d, h, c int }{{784, 64, 10}, {33, 300, 3}, {20, 7, 300}, {9, 130, 140}} {
		pairs = append(pairs,
			pair{fmt.Sprintf("softmax/%dx%d", s.d, s.c),
				func() Classifier { return NewSoftmax(s.d, s.c, 1e-3) },
				func() Classifier { return newSoftmaxOld(s.d, s.c, 1e-3) }, s.c},
			pair{fmt.Sprintf("mlp/%dx%dx%d", s.d, s.h, s.c),
				func() Classifier { return NewMLP(s.d, s.h, s.c, 2e-3) },
				func() Classifier { return newMLPOld(s.d, s.h, s.c, 2e-3) }, s.c},
			pair{fmt.Sprintf("logistic/%d", s.d),
				func() Classifier { return NewLogistic(s.d, 3e-3) },
				func() Classifier { return newLogisticOld(s.d, 3e-3) }, 2})
	}
	for pi, p := range pairs {
		got, old := p.got(), p.old()
		D, _ := got.shape()
		d := batchData(t, uint64(10+pi), 150, D, p.classes)
		r := testRand(t, uint64(pi))
		x := make([]float64, got.Dim())
		xo := make([]float64, old.Dim())
		got.Init(x, testRand(t, 7))
		old.Init(xo, testRand(t, 7))
		sameBits(t, p.name+" Init", x, xo)
		u := randomVec(r, got.Dim(), 1)
		for bname, idx := range map[string][]int{"batch": {3, 0, 149, 3, 77, 12}, "all": nil} {
			what := p.name + "/" + bname
			sameBit(t, what+" Loss", got.Loss(x, d, idx), old.Loss(x, d, idx))
			sameBit(t, what+" Accuracy", got.Accuracy(x, d, idx), old.Accuracy(x, d, idx))
			g, go_ := make([]float64, len(x)), make([]float64, len(x))
			sameBit(t, what+" Grad value", got.Grad(g, x, d, idx), old.Grad(go_, x, d, idx))
			sameBits(t, what+" Grad", g, go_)
			got.HVP(g, x, d, idx, u)
			old.HVP(go_, x, d, idx, u)
			sameBits(t, what+" HVP", g, go_)
			compareBilevel(t, what+" label-weights", LabelWeights(p.got(), 0.01), LabelWeights(p.old(), 0.01), x, d, idx)
			compareBilevel(t, what+" ensemble", Ensemble([]Classifier{p.got(), p.got()}, 0.01),
				Ensemble([]Classifier{p.old(), p.old()}, 0.01), append(append([]float64{}, x...), u...), d, idx)
			compareBilevel(t, what+" mtlda", MTLDA([]Classifier{p.got(), p.got()}, 0.01, 5e-4),
				MTLDA([]Classifier{p.old(), p.old()}, 0.01, 5e-4), append(append([]float64{}, u...), x...), d, idx)
			compareWeighted(t, what+" sample-weighted", NewSampleWeighted(p.got()), NewSampleWeighted(p.old()), x, u, d, idx)
		}
	}
}

// compareBilevel runs every product of got and want at x (and a λ and u
// drawn from a fixed stream) and fails unless they agree bit for bit.
func compareBilevel(t *testing.T, what string, got, want Bilevel, x []float64, d *datasets.Dataset, idx []int) {
	t.Helper()
	if got.DimX() != want.DimX() || got.DimLambda() != want.DimLambda() || got.DimX() != len(x) {
		t.Fatalf("%s: dims (%d, %d) and (%d, %d) for %d parameters", what, got.DimX(), got.DimLambda(), want.DimX(), want.DimLambda(), len(x))
	}
	r := testRand(t, 5)
	lambda := randomVec(r, got.DimLambda(), 0.3)
	u := randomVec(r, got.DimX(), 1)
	a, b := make([]float64, got.DimX()), make([]float64, got.DimX())
	la, lb := make([]float64, got.DimLambda()), make([]float64, got.DimLambda())
	sameBit(t, what+" InnerLoss", got.InnerLoss(x, lambda, d, idx), want.InnerLoss(x, lambda, d, idx))
	sameBit(t, what+" InnerGrad value", got.InnerGrad(a, x, lambda, d, idx), want.InnerGrad(b, x, lambda, d, idx))
	sameBits(t, what+" InnerGrad", a, b)
	got.InnerHVP(a, x, lambda, d, idx, u)
	want.InnerHVP(b, x, lambda, d, idx, u)
	sameBits(t, what+" InnerHVP", a, b)
	got.InnerCross(la, x, lambda, d, idx, u)
	want.InnerCross(lb, x, lambda, d, idx, u)
	sameBits(t, what+" InnerCross", la, lb)
	sameBit(t, what+" OuterGrad value", got.OuterGrad(a, la, x, lambda, d, idx), want.OuterGrad(b, lb, x, lambda, d, idx))
	sameBits(t, what+" OuterGrad x", a, b)
	sameBits(t, what+" OuterGrad λ", la, lb)
	sameBit(t, what+" Accuracy", got.Accuracy(x, lambda, d, idx), want.Accuracy(x, lambda, d, idx))
}

// compareWeighted runs every product of the per-sample weighted losses got
// and want and fails unless they agree bit for bit.
func compareWeighted(t *testing.T, what string, got, want *SampleWeighted, x, u []float64, d *datasets.Dataset, idx []int) {
	t.Helper()
	lambda := randomVec(testRand(t, 6), d.N, 1)
	a, b := make([]float64, len(x)), make([]float64, len(x))
	sameBit(t, what+" Loss", got.Loss(x, lambda, d, idx), want.Loss(x, lambda, d, idx))
	sameBit(t, what+" Grad value", got.Grad(a, x, lambda, d, idx), want.Grad(b, x, lambda, d, idx))
	sameBits(t, what+" Grad", a, b)
	got.HVP(a, x, lambda, d, idx, u)
	want.HVP(b, x, lambda, d, idx, u)
	sameBits(t, what+" HVP", a, b)
	n := len(idx)
	if idx == nil {
		n = d.N
	}
	da, db := make([]float64, n), make([]float64, n)
	got.SampleDirectional(da, x, d, idx, u)
	want.SampleDirectional(db, x, d, idx, u)
	sameBits(t, what+" SampleDirectional", da, db)
	sameBit(t, what+" SampleGrad value", got.SampleGrad(a, x, d, 4), want.SampleGrad(b, x, d, 4))
	sameBits(t, what+" SampleGrad", a, b)
	sameBit(t, what+" Probability", got.Probability(x, d, 4), want.Probability(x, d, 4))
}
