package models

import (
	"hgpsim/datasets"
	"math/rand/v2"
	"testing"
)

// benchOp is one product a benchmark times.
type benchOp struct {
	name string
	f    func()
}

// runOps times each op as the sub-benchmark prefix+name.
func runOps(b *testing.B, prefix string, ops []benchOp) {
	for _, op := range ops {
		b.Run(prefix+op.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				op.f()
			}
		})
	}
}

// randomBatch draws n row indices of d from r, with repetition.
func randomBatch(r *rand.Rand, d *datasets.Dataset, n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = r.IntN(d.N)
	}
	return idx
}

// BenchmarkBilevelMLP measures the products of the bilevel problems on the
// MLP of BenchmarkMLPHVP; LabelWeights should cost about what MLP.HVP does
// and a K = 3 ensemble about three times that. The f32/ cases are the same
// in float32.
func BenchmarkBilevelMLP(b *testing.B) {
	benchBilevelMLP[float64](b, "")
	benchBilevelMLP[float32](b, "f32/")
}

func benchBilevelMLP[F Float](b *testing.B, prefix string) {
	const features, hidden, classes, batch = 784, 64, 10, 128
	mlp := func() Classifier[F] { return NewMLP[F](features, hidden, classes, 1e-3) }
	for _, c := range []struct {
		name string
		b    Bilevel[F]
	}{
		{"LabelWeights", LabelWeights(mlp(), 0)},
		{"Ensemble3", Ensemble([]Classifier[F]{mlp(), mlp(), mlp()}, 0.01)},
	} {
		r := testRand(b, 0)
		ds := randomData(r, 4*batch, features, classes)
		x := make([]F, c.b.DimX())
		c.b.Init(x, r)
		lambda := randomVec(r, c.b.DimLambda(), 1)
		u := make([]F, len(x))
		for i, v := range randomVec(r, len(x), 1) {
			u[i] = F(v)
		}
		dst, dl := make([]F, len(x)), make([]float64, len(lambda))
		idx := randomBatch(r, ds, batch)
		runOps(b, prefix+c.name+"/", []benchOp{
			{"InnerGrad", func() { c.b.InnerGrad(dst, x, lambda, ds, idx) }},
			{"InnerHVP", func() { c.b.InnerHVP(dst, x, lambda, ds, idx, u) }},
			{"InnerCross", func() { c.b.InnerCross(dl, x, lambda, ds, idx, u) }},
		})
	}
}

// BenchmarkHyperRound measures the model's share of one HGP round at a
// client of the paper's n = 100 setting (PDBO-MTL&DA, three softmax bases,
// 42 full-batch rows): the Hessian-vector and cross products of the same u
// computed separately (before issue 13), fused in one pass, and fused with
// the forward pass kept across rounds (what the estimators now do at full
// batch). Compare the three in one run.
func BenchmarkHyperRound(b *testing.B) {
	const features, classes, rows = 784, 10, 42
	sm := func() Classifier[float64] { return NewSoftmax[float64](features, classes, 1e-3) }
	m := MTLDA([]Classifier[float64]{sm(), sm(), sm()}, 0.01, 5e-4)
	r := testRand(b, 0)
	ds := randomData(r, rows, features, classes)
	x := make([]float64, m.DimX())
	m.Init(x, r)
	lambda := randomVec(r, m.DimLambda(), 1)
	u := randomVec(r, len(x), 1)
	hv, cross := make([]float64, len(x)), make([]float64, len(lambda))
	lz := m.(Linearizer[float64])
	kept := lz.Linearize(x, lambda, ds, nil)
	for _, op := range []struct {
		name string
		f    func()
	}{
		{"separate", func() {
			m.InnerHVP(hv, x, lambda, ds, nil, u)
			m.InnerCross(cross, x, lambda, ds, nil, u)
		}},
		{"fused", func() { lz.Linearize(x, lambda, ds, nil).Products(hv, cross, u) }},
		{"fused-kept", func() { kept.Products(hv, cross, u) }},
	} {
		b.Run(op.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				op.f()
			}
		})
	}
}
