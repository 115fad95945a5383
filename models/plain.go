package models

import (
	"fmt"
	"hgpsim/datasets"
	"math/rand/v2"
)

// checkLen panics unless len(v) == n. Unlike checkVec it does not call n a
// model dimension, so it also serves λ and the bilevel destinations.
func checkLen[T any](what string, v []T, n int) {
	if len(v) != n {
		panic(fmt.Sprintf("models: len(%s)=%d, want %d", what, len(v), n))
	}
}

// plain runs a single-level model through the Bilevel interface, with no
// hyperparameters (d_λ = 0). See Plain.
type plain[F Float] struct {
	m SecondOrder[F]
}

// Plain returns m as a Bilevel problem with no hyperparameters: d_λ = 0 and
// both costs are m's loss, regularizer included,
//
//	f(x) = F(x) = m.Loss(x),
//
// on whatever dataset the caller passes. InnerCross and the λ part of
// OuterGrad write nothing (their destinations have length 0). It lets SGP
// drive a plain model through the same interface as the bilevel ones.
//
// Plain keeps its own clone of m, so m may go on being used elsewhere.
func Plain[F Float](m SecondOrder[F]) Bilevel[F] {
	return &plain[F]{m: m.Clone().(SecondOrder[F])}
}

var _ Bilevel[float64] = (*plain[float64])(nil)

func (p *plain[F]) DimX() int      { return p.m.Dim() }
func (p *plain[F]) DimLambda() int { return 0 }

func (p *plain[F]) Init(dst []F, r *rand.Rand) { p.m.Init(dst, r) }

func (p *plain[F]) InnerLoss(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	checkLen("lambda", lambda, 0)
	return p.m.Loss(x, d, idx)
}

func (p *plain[F]) InnerGrad(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	checkLen("lambda", lambda, 0)
	return p.m.Grad(dst, x, d, idx)
}

func (p *plain[F]) InnerHVP(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F) {
	checkLen("lambda", lambda, 0)
	p.m.HVP(dst, x, d, idx, u)
}

// InnerCross checks its arguments and writes nothing: f does not depend on λ.
func (p *plain[F]) InnerCross(dst []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F) {
	checkLen("dst", dst, 0)
	checkLen("lambda", lambda, 0)
	checkVec("x", x, p.m.Dim())
	checkVec("u", u, p.m.Dim())
	if c, ok := p.m.(Classifier[F]); ok {
		features, classes := c.shape()
		checkData(d, features, classes)
	}
	batchSize(d, idx)
}

func (p *plain[F]) OuterGrad(dstX []F, dstLambda []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	checkLen("dstLambda", dstLambda, 0)
	checkLen("lambda", lambda, 0)
	return p.m.Grad(dstX, x, d, idx)
}

func (p *plain[F]) Accuracy(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	checkLen("lambda", lambda, 0)
	return p.m.Accuracy(x, d, idx)
}

func (p *plain[F]) Clone() Bilevel[F] { return Plain(p.m) }
