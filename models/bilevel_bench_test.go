package models

import "testing"

// BenchmarkBilevelMLP measures the products of the bilevel problems on the
// MLP of BenchmarkMLPHVP; LabelWeights should cost about what MLP.HVP does
// and a K = 3 ensemble about three times that.
func BenchmarkBilevelMLP(b *testing.B) {
	const features, hidden, classes, batch = 784, 64, 10, 128
	mlp := func() Classifier { return NewMLP(features, hidden, classes, 1e-3) }
	for _, c := range []struct {
		name string
		b    Bilevel
	}{
		{"LabelWeights", LabelWeights(mlp(), 0)},
		{"Ensemble3", Ensemble([]Classifier{mlp(), mlp(), mlp()}, 0.01)},
	} {
		r := testRand(b, 0)
		data := randomData(r, 4*batch, features, classes)
		x := make([]float64, c.b.DimX())
		c.b.Init(x, r)
		lambda := randomVec(r, c.b.DimLambda(), 1)
		u := randomVec(r, len(x), 1)
		dst, dl := make([]float64, len(x)), make([]float64, len(lambda))
		idx := make([]int, batch)
		for i := range idx {
			idx[i] = r.IntN(data.N)
		}
		for _, op := range []struct {
			name string
			f    func()
		}{
			{"InnerGrad", func() { c.b.InnerGrad(dst, x, lambda, data, idx) }},
			{"InnerHVP", func() { c.b.InnerHVP(dst, x, lambda, data, idx, u) }},
			{"InnerCross", func() { c.b.InnerCross(dl, x, lambda, data, idx, u) }},
		} {
			b.Run(c.name+"/"+op.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					op.f()
				}
			})
		}
	}
}
