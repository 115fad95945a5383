package models

import (
	"fmt"
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
// Logistic holds no scratch, but follow the Model contract anyway (one
// goroutine per value, Clone for others) so that callers need not know.
type Logistic struct {
	features int
	l2       float64
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

func (m *Logistic) check(x []float64, d *Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, 2)
}

// margin returns z = wᵀa + c.
func (m *Logistic) margin(x, a []float64) float64 {
	return floats.Dot(x[:m.features], a) + x[m.features]
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

// Loss returns f(x) on the batch.
func (m *Logistic) Loss(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, 2)
		z := m.margin(x, d.Row(i))
		loss += softplus(z) - float64(y)*z
	}
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x). Per row the gradient is
// (σ(z) − y)·[a; 1].
func (m *Logistic) Grad(dst, x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	D := m.features
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := float64(label(d, i, 2))
		a := d.Row(i)
		z := m.margin(x, a)
		loss += softplus(z) - y*z
		g := inv * (sigmoid(z) - y)
		floats.AddScaled(dst[:D], g, a)
		dst[D] += g
	}
	floats.AddScaled(dst, m.l2, x)
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// HVP writes dst = ∇²f(x)·u. Per row the Hessian is σ(1−σ)·[a; 1][a; 1]ᵀ,
// applied without forming it: σ(1−σ)·([a; 1]ᵀu)·[a; 1].
func (m *Logistic) HVP(dst, x []float64, d *Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	D := m.features
	for k := range n {
		i := rowIndex(d, idx, k)
		label(d, i, 2)
		a := d.Row(i)
		s := sigmoid(m.margin(x, a))
		r := inv * s * (1 - s) * (floats.Dot(u[:D], a) + u[D])
		floats.AddScaled(dst[:D], r, a)
		dst[D] += r
	}
	floats.AddScaled(dst, m.l2, u)
}

// Accuracy returns the fraction of rows where z > 0 exactly when y = 1.
func (m *Logistic) Accuracy(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	n := batchSize(d, idx)
	correct := 0
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, 2)
		pred := 0
		if m.margin(x, d.Row(i)) > 0 {
			pred = 1
		}
		if pred == y {
			correct++
		}
	}
	return float64(correct) / float64(n)
}
