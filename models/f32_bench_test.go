package models

import (
	"fmt"
	"hgpsim/internal/vec"
	"testing"
)

// BenchmarkCNNMixture times the products of PDBO-MTL&DA with FedEM's CNN
// as K = 3 bases (scenarios/paper/personalization-cnn-stod.yaml: 28×28
// images, 10 classes, batch 128) in float64 and float32.
func BenchmarkCNNMixture(b *testing.B) {
	benchCNNMixture[float64](b)
	benchCNNMixture[float32](b)
}

func benchCNNMixture[F Float](b *testing.B) {
	const features, classes, batch = 784, 10, 128
	arch := &CNNSpec{L2: 1e-3, Preset: "fedem-cnn"}
	m := Build[F](arch, &mtldaHead{}, features, classes, HeadParams{K: 3, OuterL2: 0.01, OuterL2Labels: 5e-4})
	r := testRand(b, 0)
	ds := f32Data(r, 2*batch, features, classes)
	x, u := make([]F, m.DimX()), make([]F, m.DimX())
	m.Init(x, r)
	for i := range u {
		u[i] = F(r.NormFloat64())
	}
	lambda := randomVec(r, m.DimLambda(), 0.5)
	dst, dl := make([]F, len(x)), make([]float64, len(lambda))
	idx := randomBatch(r, ds, batch)
	runOps(b, fmt.Sprintf("f%d/", 8*vec.ElemSize[F]()), []benchOp{
		{"InnerGrad", func() { m.InnerGrad(dst, x, lambda, ds, idx) }},
		{"InnerHVP", func() { m.InnerHVP(dst, x, lambda, ds, idx, u) }},
		{"InnerCross", func() { m.InnerCross(dl, x, lambda, ds, idx, u) }},
	})
}
