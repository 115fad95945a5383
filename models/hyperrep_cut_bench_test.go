package models

import (
	"testing"

	"hgpsim/models/nn"
)

// BenchmarkCutHyperRepProducts measures the products of the
// hyper-representation problem on LeNet (3×32×32, 10 classes, batch 64,
// the last two dense layers inner): the lower level (InnerGrad, InnerHVP:
// the dense tail on cached features) against the whole net's gradient
// (FullGrad, what the lower level would cost without the split), and the
// products in λ (InnerCross, OuterGrad), which run the body forward and
// backward.
func BenchmarkCutHyperRepProducts(b *testing.B) {
	const classes, batch = 10, 64
	in := nn.Shape{C: 3, H: 32, W: 32}
	layers, err := nn.Preset("lenet", in, classes)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewCNNHyperRep[float64](in, layers, classes, DefaultInnerLayers, 1e-3)
	if err != nil {
		b.Fatal(err)
	}
	full, err := NewNet[float64](in, layers, classes, 1e-3)
	if err != nil {
		b.Fatal(err)
	}
	r := testRand(b, 0)
	ds := randomData(r, 4*batch, in.Size(), classes)
	x, lambda := make([]float64, m.DimX()), make([]float64, m.DimLambda())
	m.Init(x, r)
	m.InitLambda(lambda, r)
	p := append(append([]float64(nil), lambda...), x...)
	u := randomVec(r, len(x), 1)
	dx, dl, dp := make([]float64, len(x)), make([]float64, len(lambda)), make([]float64, len(p))
	idx := randomBatch(r, ds, batch)
	runOps(b, "", []benchOp{
		{"InnerGrad", func() { m.InnerGrad(dx, x, lambda, ds, idx) }},
		{"InnerHVP", func() { m.InnerHVP(dx, x, lambda, ds, idx, u) }},
		{"FullGrad", func() { full.Grad(dp, p, ds, idx) }},
		{"InnerCross", func() { m.InnerCross(dl, x, lambda, ds, idx, u) }},
		{"OuterGrad", func() { m.OuterGrad(dx, dl, x, lambda, ds, idx) }},
	})
}
