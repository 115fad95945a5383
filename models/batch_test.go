package models

import (
	"fmt"
	"hgpsim/datasets"
	"math"
	"testing"
)

// The batch code paths (internal/gemm products over a whole minibatch) must
// give exactly the bits of the row-by-row code they replaced, kept in
// rowref_test.go. These tests compare them at Fashion-MNIST-like shapes
// (784 features, 10 classes, batch 128), on minibatches and on full
// batches longer than one chunk.

const (
	batchD, batchC, batchH, batchN, batchB = 784, 10, 64, 600, 128
)

// sameBits fails unless got and want are equal bit for bit.
func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: element %d of %d is %v (%#x), the row code gives %v (%#x)",
				what, i, len(got), got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

func sameBit(t *testing.T, what string, got, want float64) {
	t.Helper()
	sameBits(t, what, []float64{got}, []float64{want})
}

// batchData returns n rows shaped like Fashion-MNIST: about 40% exact
// zeros (background pixels), the rest N(0, 1).
func batchData(t *testing.T, salt uint64, n, d, c int) *datasets.Dataset {
	r := testRand(t, salt)
	ds := randomData(r, n, d, c)
	for i := range ds.X {
		if r.Float64() < 0.4 {
			ds.X[i] = 0
		}
	}
	return ds
}

// compareBatches returns the minibatches every comparison runs on: a random
// batch of 128 (with repeats), a single row, and the full dataset (nil,
// more rows than one chunk).
func compareBatches(t *testing.T, d *datasets.Dataset) map[string][]int {
	r := testRand(t, 99)
	idx := make([]int, batchB)
	for i := range idx {
		idx[i] = r.IntN(d.N)
	}
	return map[string][]int{"batch128": idx, "one": {d.N - 1}, "all": nil}
}

func TestBatchModelsMatchRowCode(t *testing.T) {
	type pair struct {
		name string
		got  SecondOrder[float64]
		want interface {
			Loss(x []float64, d *datasets.Dataset, idx []int) float64
			Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64
			HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64)
			Accuracy(x []float64, d *datasets.Dataset, idx []int) float64
		}
		classes int
	}
	pairs := []pair{
		{"softmax", NewSoftmax[float64](batchD, batchC, 1e-3), newRefSoftmax(NewSoftmax[float64](batchD, batchC, 1e-3)), batchC},
		{"mlp", NewMLP[float64](batchD, batchH, batchC, 1e-3), newRefMLP(NewMLP[float64](batchD, batchH, batchC, 1e-3)), batchC},
		{"logistic", NewLogistic[float64](batchD, 1e-3), newRefLogistic(NewLogistic[float64](batchD, 1e-3)), 2},
	}
	for _, p := range pairs {
		d := batchData(t, 1, batchN, batchD, p.classes)
		r := testRand(t, 2)
		x := make([]float64, p.got.Dim())
		p.got.Init(x, r)
		u := randomVec(r, len(x), 1)
		for bn, idx := range compareBatches(t, d) {
			what := fmt.Sprintf("%s/%s", p.name, bn)
			sameBit(t, what+" Loss", p.got.Loss(x, d, idx), p.want.Loss(x, d, idx))
			sameBit(t, what+" Accuracy", p.got.Accuracy(x, d, idx), p.want.Accuracy(x, d, idx))
			g, wg := make([]float64, len(x)), make([]float64, len(x))
			sameBit(t, what+" Grad value", p.got.Grad(g, x, d, idx), p.want.Grad(wg, x, d, idx))
			sameBits(t, what+" Grad", g, wg)
			p.got.HVP(g, x, d, idx, u)
			p.want.HVP(wg, x, d, idx, u)
			sameBits(t, what+" HVP", g, wg)
		}
	}
}

// heads builds each head over fresh bases, with the reference mixture over
// reference bases of the same shapes.
func batchHeads() []struct {
	name string
	got  Bilevel[float64]
	want *refMixture
} {
	sm := func() (Classifier[float64], refClassifier) {
		return NewSoftmax[float64](batchD, batchC, 1e-3), newRefSoftmax(NewSoftmax[float64](batchD, batchC, 1e-3))
	}
	mlp := func() (Classifier[float64], refClassifier) {
		return NewMLP[float64](batchD, batchH, batchC, 2e-3), newRefMLP(NewMLP[float64](batchD, batchH, batchC, 2e-3))
	}
	bases := func(k int, mk func() (Classifier[float64], refClassifier)) ([]Classifier[float64], []refClassifier) {
		var bs []Classifier[float64]
		var rs []refClassifier
		for range k {
			b, r := mk()
			bs, rs = append(bs, b), append(rs, r)
		}
		return bs, rs
	}
	type head = struct {
		name string
		got  Bilevel[float64]
		want *refMixture
	}
	var hs []head
	b, r := mlp()
	hs = append(hs, head{"label-weights/mlp", LabelWeights(b, 0.01), newRefMixture([]refClassifier{r}, false, true, 0, 0.01)})
	b, r = sm()
	hs = append(hs, head{"label-weights/softmax", LabelWeights(b, 0.01), newRefMixture([]refClassifier{r}, false, true, 0, 0.01)})
	bs, rs := bases(3, sm)
	hs = append(hs, head{"ensemble/softmax", Ensemble(bs, 0.01), newRefMixture(rs, true, false, 0.01, 0)})
	bs, rs = bases(2, mlp)
	hs = append(hs, head{"ensemble/mlp", Ensemble(bs, 0.01), newRefMixture(rs, true, false, 0.01, 0)})
	bs, rs = bases(2, sm)
	hs = append(hs, head{"mtlda/softmax", MTLDA(bs, 0.01, 5e-4), newRefMixture(rs, true, true, 0.01, 5e-4)})
	bs, rs = bases(2, mlp)
	hs = append(hs, head{"mtlda/mlp", MTLDA(bs, 0.01, 5e-4), newRefMixture(rs, true, true, 0.01, 5e-4)})
	return hs
}

func TestBatchHeadsMatchRowCode(t *testing.T) {
	d := batchData(t, 3, batchN, batchD, batchC)
	for _, h := range batchHeads() {
		r := testRand(t, 4)
		x := make([]float64, h.got.DimX())
		h.got.Init(x, r)
		lambda := randomVec(r, h.got.DimLambda(), 0.5)
		u := randomVec(r, len(x), 1)
		for bn, idx := range compareBatches(t, d) {
			what := fmt.Sprintf("%s/%s", h.name, bn)
			sameBit(t, what+" InnerLoss", h.got.InnerLoss(x, lambda, d, idx), h.want.InnerLoss(x, lambda, d, idx))
			sameBit(t, what+" Accuracy", h.got.Accuracy(x, lambda, d, idx), h.want.Accuracy(x, lambda, d, idx))
			gx, wx := make([]float64, len(x)), make([]float64, len(x))
			gl, wl := make([]float64, len(lambda)), make([]float64, len(lambda))
			sameBit(t, what+" InnerGrad value", h.got.InnerGrad(gx, x, lambda, d, idx), h.want.InnerGrad(wx, x, lambda, d, idx))
			sameBits(t, what+" InnerGrad", gx, wx)
			sameBit(t, what+" OuterGrad value",
				h.got.OuterGrad(gx, gl, x, lambda, d, idx), h.want.OuterGrad(wx, wl, x, lambda, d, idx))
			sameBits(t, what+" OuterGrad x", gx, wx)
			sameBits(t, what+" OuterGrad λ", gl, wl)
			h.want.products(wx, wl, x, lambda, d, idx, u)
			h.got.InnerHVP(gx, x, lambda, d, idx, u)
			sameBits(t, what+" InnerHVP", gx, wx)
			h.got.InnerCross(gl, x, lambda, d, idx, u)
			sameBits(t, what+" InnerCross", gl, wl)
			// Linearized products, twice: the second call may replay a
			// cached forward pass.
			lin := h.got.(Linearizer[float64]).Linearize(x, lambda, d, idx)
			for call := range 2 {
				clear(gx)
				clear(gl)
				lin.Products(gx, gl, u)
				sameBits(t, fmt.Sprintf("%s Products (call %d) hv", what, call), gx, wx)
				sameBits(t, fmt.Sprintf("%s Products (call %d) cross", what, call), gl, wl)
			}
		}
	}
}

func TestBatchSampleWeightedMatchesRowCode(t *testing.T) {
	d := batchData(t, 5, batchN, batchD, batchC)
	for _, c := range []struct {
		name string
		got  Classifier[float64]
		want refClassifier
	}{
		{"softmax", NewSoftmax[float64](batchD, batchC, 1e-3), newRefSoftmax(NewSoftmax[float64](batchD, batchC, 1e-3))},
		{"mlp", NewMLP[float64](batchD, batchH, batchC, 1e-3), newRefMLP(NewMLP[float64](batchD, batchH, batchC, 1e-3))},
	} {
		got, want := NewSampleWeighted[float64](c.got), newRefWeighted(c.want)
		r := testRand(t, 6)
		x := make([]float64, got.Dim())
		got.Init(x, r)
		u := randomVec(r, len(x), 1)
		lambda := make([]float64, d.N)
		for i := range lambda {
			if r.Float64() < 0.7 { // the rest stay 0: rows the row code skipped
				lambda[i] = r.Float64()
			}
		}
		for _, lam := range []struct {
			name string
			l    []float64
		}{{"weighted", lambda}, {"unweighted", nil}} {
			for bn, idx := range compareBatches(t, d) {
				what := fmt.Sprintf("%s/%s/%s", c.name, lam.name, bn)
				sameBit(t, what+" Loss", got.Loss(x, lam.l, d, idx), want.Loss(x, lam.l, d, idx))
				g, wg := make([]float64, len(x)), make([]float64, len(x))
				sameBit(t, what+" Grad value", got.Grad(g, x, lam.l, d, idx), want.Grad(wg, x, lam.l, d, idx))
				sameBits(t, what+" Grad", g, wg)
				got.HVP(g, x, lam.l, d, idx, u)
				want.HVP(wg, x, lam.l, d, idx, u)
				sameBits(t, what+" HVP", g, wg)
				n := batchSize(d, idx)
				sd, wsd := make([]float64, n), make([]float64, n)
				got.SampleDirectional(sd, x, d, idx, u)
				want.SampleDirectional(wsd, x, d, idx, u)
				sameBits(t, what+" SampleDirectional", sd, wsd)
			}
		}
		g, wg := make([]float64, len(x)), make([]float64, len(x))
		sameBit(t, c.name+" SampleGrad value", got.SampleGrad(g, x, d, 7), want.SampleGrad(wg, x, d, 7))
		sameBits(t, c.name+" SampleGrad", g, wg)
	}
}

func TestBatchHyperRepMatchesRowCode(t *testing.T) {
	const hidden = 200 // FedNest's 784→200→10
	d := batchData(t, 7, batchN, batchD, batchC)
	val := batchData(t, 8, batchN, batchD, batchC)
	for _, relu := range []bool{true, false} {
		got := NewHyperRep[float64](batchD, hidden, batchC, 0.01, relu)
		want := newRefHyperRep(batchD, hidden, batchC, 0.01, relu)
		r := testRand(t, 9)
		x, lambda := make([]float64, got.DimX()), make([]float64, got.DimLambda())
		got.Init(x, r)
		got.InitLambda(lambda, r)
		u := randomVec(r, len(x), 1)
		gx, wx := make([]float64, len(x)), make([]float64, len(x))
		gl, wl := make([]float64, len(lambda)), make([]float64, len(lambda))
		// Two λ: the feature cache is rebuilt when λ changes.
		for step := range 2 {
			for bn, idx := range compareBatches(t, d) {
				what := fmt.Sprintf("relu=%v/step %d/%s", relu, step, bn)
				sameBit(t, what+" InnerLoss", got.InnerLoss(x, lambda, d, idx), want.InnerLoss(x, lambda, d, idx))
				sameBit(t, what+" Accuracy", got.Accuracy(x, lambda, val, nil), want.Accuracy(x, lambda, val, nil))
				sameBit(t, what+" InnerGrad value", got.InnerGrad(gx, x, lambda, d, idx), want.InnerGrad(wx, x, lambda, d, idx))
				sameBits(t, what+" InnerGrad", gx, wx)
				got.InnerHVP(gx, x, lambda, d, idx, u)
				want.InnerHVP(wx, x, lambda, d, idx, u)
				sameBits(t, what+" InnerHVP", gx, wx)
				got.InnerCross(gl, x, lambda, d, idx, u)
				want.InnerCross(wl, x, lambda, d, idx, u)
				sameBits(t, what+" InnerCross", gl, wl)
				sameBit(t, what+" OuterGrad value",
					got.OuterGrad(gx, gl, x, lambda, val, idx[:min(len(idx), 64)]),
					want.OuterGrad(wx, wl, x, lambda, val, idx[:min(len(idx), 64)]))
				sameBits(t, what+" OuterGrad x", gx, wx)
				sameBits(t, what+" OuterGrad λ", gl, wl)
				sameBit(t, what+" OuterGrad λ only",
					got.OuterGrad(nil, gl, x, lambda, val, nil), want.OuterGrad(nil, wl, x, lambda, val, nil))
				sameBits(t, what+" OuterGrad λ only", gl, wl)
			}
			for i := range lambda {
				lambda[i] += 0.01 * r.NormFloat64()
			}
		}
	}
}
