package models

import "testing"

// BenchmarkHyperRepProducts measures the products of the federated
// hyper-representation problem at FedNest's shape (784→200→10, ReLU,
// batch 128): the lower level (InnerGrad, InnerHVP: the output layer on
// cached features, which are computed once per λ) and the products in λ
// (InnerCross, OuterGrad), which backpropagate into W₁ for every row.
func BenchmarkHyperRepProducts(b *testing.B) {
	const features, hidden, classes, batch = 784, 200, 10, 128
	m := NewHyperRep[float64](features, hidden, classes, 0.01, true)
	r := testRand(b, 0)
	ds := randomData(r, 4*batch, features, classes)
	x, lambda := make([]float64, m.DimX()), make([]float64, m.DimLambda())
	m.Init(x, r)
	m.InitLambda(lambda, r)
	u := randomVec(r, len(x), 1)
	dx, dl := make([]float64, len(x)), make([]float64, len(lambda))
	idx := randomBatch(r, ds, batch)
	runOps(b, "", []benchOp{
		{"InnerGrad", func() { m.InnerGrad(dx, x, lambda, ds, idx) }},
		{"InnerHVP", func() { m.InnerHVP(dx, x, lambda, ds, idx, u) }},
		{"InnerCross", func() { m.InnerCross(dl, x, lambda, ds, idx, u) }},
		{"OuterGrad", func() { m.OuterGrad(dx, dl, x, lambda, ds, idx) }},
	})
}
