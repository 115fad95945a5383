package models

import (
	"fmt"
	"hgpsim/datasets"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
)

// Logistic is binary logistic regression with L2 regularization:
//
//	f(x) = mean_b [softplus(z_b) − y_b z_b] + (L2/2)‖x‖²,  z_b = wᵀa_b + c
//
// with labels y_b ∈ {0, 1}; the bracket is the cross-entropy of
// σ(z_b) = P(y = 1). The bias is regularized too, so f is L2-strongly
// convex. Datasets must have C = 2.
//
// Layout of x: w (Features), then c.
//
// A *Logistic holds scratch buffers: use it from one goroutine and Clone it
// for others.
type Logistic struct {
	features int
	l2       float64

	a []float64 // the rows of the last batchLogits (n×Features)
	n int
	s classifierScratch
}

// NewLogistic returns a Logistic model. It panics if features < 1 or l2 is
// negative or not finite.
func NewLogistic(features int, l2 float64) *Logistic {
	if features < 1 {
		panic(fmt.Sprintf("models: NewLogistic(features=%d): need features >= 1", features))
	}
	checkL2("NewLogistic", l2)
	return &Logistic{features: features, l2: l2}
}

// Dim returns Features + 1.
func (m *Logistic) Dim() int { return m.features + 1 }

// Clone returns a Logistic with the same shape and L2.
func (m *Logistic) Clone() Model { return NewLogistic(m.features, m.l2) }

// Init fills dst with N(0, 0.01²) draws from r, for the reason given at
// Softmax.Init.
func (m *Logistic) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.Dim())
	for i := range dst {
		dst[i] = 0.01 * r.NormFloat64()
	}
}

func (m *Logistic) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, 2)
}

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

// chunk binds the batch rows lo…hi−1 and sizes the scratch for them:
// s.z holds one margin per row, s.v and s.g one more value each.
func (m *Logistic) chunk(d *datasets.Dataset, idx []int, lo, hi int) int {
	nb := hi - lo
	m.bindRows(batchRows(&m.s.a, d, idx, lo, hi), nb)
	m.s.grow(nb, 1)
	return nb
}

// Loss returns f(x) on the batch.
func (m *Logistic) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	n := batchSize(d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
		for b, z := range m.s.z[:nb] {
			y := label(d, rowIndex(d, idx, lo+b), 2)
			loss += softplus(z) - float64(y)*z
		}
	}
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x). Per row the gradient is
// (σ(z) − y)·[a; 1].
func (m *Logistic) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
		for b, z := range m.s.z[:nb] {
			y := float64(label(d, rowIndex(d, idx, lo+b), 2))
			loss += softplus(z) - y*z
			m.s.g[b] = inv * (sigmoid(z) - y)
		}
		m.addGrad(dst, m.s.g, 1)
	}
	floats.AddScaled(dst, m.l2, x)
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// HVP writes dst = ∇²f(x)·u. Per row the Hessian is σ(1−σ)·[a; 1][a; 1]ᵀ,
// applied without forming it: σ(1−σ)·([a; 1]ᵀu)·[a; 1].
func (m *Logistic) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
		m.margins(m.s.v, 1, u)
		for b := range nb {
			label(d, rowIndex(d, idx, lo+b), 2)
			s := sigmoid(m.s.z[b])
			m.s.g[b] = inv * s * (1 - s) * m.s.v[b]
		}
		m.addGrad(dst, m.s.g, 1)
	}
	floats.AddScaled(dst, m.l2, u)
}

// Accuracy returns the fraction of rows where z > 0 exactly when y = 1.
func (m *Logistic) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	n := batchSize(d, idx)
	correct := 0
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
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
