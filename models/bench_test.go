package models

import (
	"fmt"
	"hgpsim/datasets"
	"testing"
)

func BenchmarkSoftmaxGrad(b *testing.B) {
	for _, c := range []struct{ d, k, batch int }{{20, 5, 32}, {784, 10, 128}} {
		b.Run(fmt.Sprintf("D%d_C%d_B%d", c.d, c.k, c.batch), func(b *testing.B) {
			r := testRand(b, 0)
			ds := randomData(r, 4*c.batch, c.d, c.k)
			m := NewSoftmax[float64](c.d, c.k, 1e-3)
			x := randomVec(r, m.Dim(), 0.1)
			g := make([]float64, m.Dim())
			idx := randomBatch(r, ds, c.batch)
			b.ReportAllocs()
			for b.Loop() {
				m.Grad(g, x, ds, idx)
			}
		})
	}
}

func BenchmarkMLPHVP(b *testing.B) {
	const features, hidden, classes, batch = 784, 64, 10, 128
	r := testRand(b, 0)
	ds := randomData(r, 4*batch, features, classes)
	m := NewMLP[float64](features, hidden, classes, 1e-3)
	x := make([]float64, m.Dim())
	m.Init(x, r)
	u := randomVec(r, m.Dim(), 1)
	hu := make([]float64, m.Dim())
	idx := randomBatch(r, ds, batch)
	b.ReportAllocs()
	for b.Loop() {
		m.HVP(hu, x, ds, idx, u)
	}
}

func BenchmarkMLPGrad(b *testing.B) {
	const features, hidden, classes, batch = 784, 64, 10, 128
	r := testRand(b, 0)
	ds := randomData(r, 4*batch, features, classes)
	m := NewMLP[float64](features, hidden, classes, 1e-3)
	x := make([]float64, m.Dim())
	m.Init(x, r)
	g := make([]float64, m.Dim())
	idx := randomBatch(r, ds, batch)
	b.ReportAllocs()
	for b.Loop() {
		m.Grad(g, x, ds, idx)
	}
}

func BenchmarkSoftmaxHVP(b *testing.B) {
	const features, classes, batch = 784, 10, 128
	r := testRand(b, 0)
	ds := randomData(r, 4*batch, features, classes)
	m := NewSoftmax[float64](features, classes, 1e-3)
	x := randomVec(r, m.Dim(), 0.1)
	u := randomVec(r, m.Dim(), 1)
	hu := make([]float64, m.Dim())
	idx := randomBatch(r, ds, batch)
	b.ReportAllocs()
	for b.Loop() {
		m.HVP(hu, x, ds, idx, u)
	}
}

// hvpSize is a benchmark size: D features, C classes (ignored by
// Logistic, which is binary), H hidden units (MLP only), minibatch B.
type hvpSize struct{ d, c, h, batch int }

func (s hvpSize) String() string {
	if s.h > 0 {
		return fmt.Sprintf("D%d_H%d_C%d_B%d", s.d, s.h, s.c, s.batch)
	}
	return fmt.Sprintf("D%d_C%d_B%d", s.d, s.c, s.batch)
}

var (
	quickstartSize = hvpSize{d: 20, c: 5, batch: 32}    // scenarios/quickstart.yaml
	fmnistSize     = hvpSize{d: 784, c: 10, batch: 128} // Fashion-MNIST, personalization scenarios
)

// benchProduct times f, one call per op, on a minibatch of s.batch rows
// drawn from 4·s.batch random rows.
func benchProduct(b *testing.B, s hvpSize, classes int, f func(ds *datasets.Dataset, idx []int)) {
	r := testRand(b, 0)
	ds := randomData(r, 4*s.batch, s.d, classes)
	idx := randomBatch(r, ds, s.batch)
	b.ReportAllocs()
	for b.Loop() {
		f(ds, idx)
	}
}

// BenchmarkHVP measures one Hessian-vector product ∇²f·u of the models at
// the sizes of the quickstart (D = 20, C = 5, batch 32) and Fashion-MNIST
// (D = 784, C = 10, batch 128) scenarios: Model.HVP for the plain models,
// Bilevel.InnerHVP (what Â costs in HGP) for the heads, which are built on
// softmax as the scenarios build them (λ random, outer L2 0.01). Softmax
// 784-10 and MLP 784-64-10 are BenchmarkSoftmaxHVP and BenchmarkMLPHVP,
// the heads on MLP 784-64-10 BenchmarkBilevelMLP.
func BenchmarkHVP(b *testing.B) {
	plain := []struct {
		name string
		s    hvpSize
		m    SecondOrder[float64]
	}{
		{"Softmax", quickstartSize, NewSoftmax[float64](20, 5, 1e-3)},
		{"Logistic", hvpSize{d: 20, c: 2, batch: 32}, NewLogistic[float64](20, 1e-3)},
		{"Logistic", hvpSize{d: 784, c: 2, batch: 128}, NewLogistic[float64](784, 1e-3)},
		{"MLP", hvpSize{d: 20, h: 32, c: 5, batch: 32}, NewMLP[float64](20, 32, 5, 1e-3)},
	}
	for _, c := range plain {
		b.Run(c.name+"/"+c.s.String(), func(b *testing.B) {
			r := testRand(b, 1)
			x := make([]float64, c.m.Dim())
			c.m.Init(x, r)
			u := randomVec(r, len(x), 1)
			hu := make([]float64, len(x))
			benchProduct(b, c.s, c.s.c, func(ds *datasets.Dataset, idx []int) { c.m.HVP(hu, x, ds, idx, u) })
		})
	}
	for _, c := range softmaxHeads() {
		b.Run(c.name+"/"+c.s.String(), func(b *testing.B) {
			x, lambda, u := headPoint(b, c.b)
			hu := make([]float64, len(x))
			benchProduct(b, c.s, c.s.c, func(ds *datasets.Dataset, idx []int) { c.b.InnerHVP(hu, x, lambda, ds, idx, u) })
		})
	}
}

// BenchmarkCross measures one cross product (∂_λ∇ₓf)ᵀu (what B̂ costs in
// HGP) of the heads of BenchmarkHVP; an HGP round with simultaneous
// sampling costs one InnerHVP and one InnerCross per client, a VR-HGP
// round two of each.
func BenchmarkCross(b *testing.B) {
	for _, c := range softmaxHeads() {
		b.Run(c.name+"/"+c.s.String(), func(b *testing.B) {
			x, lambda, u := headPoint(b, c.b)
			dl := make([]float64, len(lambda))
			benchProduct(b, c.s, c.s.c, func(ds *datasets.Dataset, idx []int) { c.b.InnerCross(dl, x, lambda, ds, idx, u) })
		})
	}
}

type headCase struct {
	name string
	s    hvpSize
	b    Bilevel[float64]
}

// softmaxHeads are the heads of the PDBO methods on softmax at both sizes:
// label weights (pdbo-da), a K = 3 ensemble (pdbo-mtl) and both
// (pdbo-mtl-da).
func softmaxHeads() []headCase {
	var out []headCase
	for _, s := range []hvpSize{quickstartSize, fmnistSize} {
		sm := func() Classifier[float64] { return NewSoftmax[float64](s.d, s.c, 1e-3) }
		out = append(out,
			headCase{"LabelWeights-Softmax", s, LabelWeights(sm(), 0.01)},
			headCase{"Ensemble3-Softmax", s, Ensemble([]Classifier[float64]{sm(), sm(), sm()}, 0.01)},
			headCase{"EnsembleLabelWeights3-Softmax", s, MTLDA([]Classifier[float64]{sm(), sm(), sm()}, 0.01, 5e-4)},
		)
	}
	return out
}

// headPoint returns initial inner parameters, random λ and a random u.
func headPoint(b *testing.B, m Bilevel[float64]) (x, lambda, u []float64) {
	r := testRand(b, 1)
	x = make([]float64, m.DimX())
	m.Init(x, r)
	return x, randomVec(r, m.DimLambda(), 1), randomVec(r, len(x), 1)
}
