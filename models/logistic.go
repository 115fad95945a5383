package models

import (
	"math"

	"hgpsim/datasets"
)

// The binary head of a Net (NewLogistic): per row the loss is
// softplus(z) − y·z of the net's one output z, its gradient in z is
// σ(z) − y and its second derivative σ(z)(1 − σ(z)).

// softplus returns log(1 + e^z) without overflow for large z and without
// losing the tiny value for very negative z.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// sigmoid returns 1/(1 + e^−z), evaluating exp only at non-positive
// arguments so that it never overflows.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// margins runs the net on the batch rows lo…hi−1 and leaves their
// outputs z_b in m.s.z, returning nb = hi − lo; m.s.v and m.s.g hold one
// value a row too.
func (m *Net[F]) margins(x []F, d *datasets.Dataset, idx []int, lo, hi int) int {
	nb := hi - lo
	m.s.grow(nb, 1)
	m.ws().Logits(m.s.z[:nb], x, batchRows(&m.s.a, d, idx, lo, hi), nb)
	return nb
}

func (m *Net[F]) logisticLoss(x []F, d *datasets.Dataset, idx []int) float64 {
	n := batchSize(d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.margins(x, d, idx, lo, hi)
		for b, z := range m.s.z[:nb] {
			y := label(d, rowIndex(d, idx, lo+b), 2)
			loss += softplus(float64(z)) - float64(y)*float64(z)
		}
	}
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// logisticGrad: per row the gradient is (σ(z) − y)·∂z/∂x.
func (m *Net[F]) logisticGrad(dst, x []F, d *datasets.Dataset, idx []int) float64 {
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.margins(x, d, idx, lo, hi)
		for b, z := range m.s.z[:nb] {
			y := float64(label(d, rowIndex(d, idx, lo+b), 2))
			loss += softplus(float64(z)) - y*float64(z)
			m.s.g[b] = F(inv * (sigmoid(float64(z)) - y))
		}
		m.ws().VJP(dst, x, m.s.g[:nb])
	}
	return loss/float64(n) + 0.5*m.l2*addScaledSumSquares(dst, m.l2, x)
}

// logisticHVP: z is linear in x, so per row the Hessian is
// σ(1−σ)·∇z∇zᵀ, applied without forming it: σ(1−σ)·(∇zᵀu)·∇z.
func (m *Net[F]) logisticHVP(dst, x []F, d *datasets.Dataset, idx []int, u []F) {
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.margins(x, d, idx, lo, hi)
		m.ws().JVP(m.s.v[:nb], x, u)
		for b := range nb {
			label(d, rowIndex(d, idx, lo+b), 2)
			s := sigmoid(float64(m.s.z[b]))
			m.s.g[b] = F(inv * s * (1 - s) * float64(m.s.v[b]))
		}
		m.ws().VJP(dst, x, m.s.g[:nb])
	}
	addScaled(dst, m.l2, u)
}

func (m *Net[F]) logisticAccuracy(x []F, d *datasets.Dataset, idx []int) float64 {
	n := batchSize(d, idx)
	correct := 0
	for lo, hi := range chunks(n) {
		nb := m.margins(x, d, idx, lo, hi)
		for b, z := range m.s.z[:nb] {
			y := label(d, rowIndex(d, idx, lo+b), 2)
			pred := 0
			if z > 0 {
				pred = 1
			}
			if pred == y {
				correct++
			}
		}
	}
	return float64(correct) / float64(n)
}
