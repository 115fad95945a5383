package models

import (
	"fmt"
	"hgpsim/datasets"
	"math"
	"math/rand/v2"
)

// Softmax is multinomial logistic regression with L2 regularization:
//
//	f(x) = mean_b CE(softmax(W a_b + c), y_b) + (L2/2)‖x‖²
//
// where a_b is the feature row and y_b the label of example b. All parameters,
// the bias c included, are regularized, so f is L2-strongly convex
// (Assumption 1 of the paper) and the lower-level problem has a unique
// solution.
//
// Layout of x: W (Classes×Features, row-major), then c (Classes).
//
// A *Softmax holds scratch buffers: use it from one goroutine and Clone it
// for others.
type Softmax struct {
	features, classes int
	l2                float64

	a []float64 // the rows of the last batchLogits (n×Features)
	n int
	s classifierScratch
}

// NewSoftmax returns a Softmax model. It panics if features < 1,
// classes < 2 or l2 is negative or not finite: these come from an already
// validated configuration, so a bad value is a programmer error.
func NewSoftmax(features, classes int, l2 float64) *Softmax {
	if features < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewSoftmax(features=%d, classes=%d): need features >= 1, classes >= 2", features, classes))
	}
	checkL2("NewSoftmax", l2)
	return &Softmax{
		features: features,
		classes:  classes,
		l2:       l2,
	}
}

// checkL2 panics unless l2 is a finite non-negative number.
func checkL2(who string, l2 float64) {
	if !(l2 >= 0) || math.IsInf(l2, 0) {
		panic(fmt.Sprintf("models: %s: l2=%v, need a finite value >= 0", who, l2))
	}
}

// Dim returns Classes·Features + Classes.
func (m *Softmax) Dim() int { return m.classes*m.features + m.classes }

// Clone returns a Softmax with the same shape and L2 and its own scratch.
func (m *Softmax) Clone() Model { return NewSoftmax(m.features, m.classes, m.l2) }

// Init fills dst with N(0, 0.01²) draws from r. The problem is strongly
// convex, so the start does not change the solution; a small random one
// keeps clients that each draw from their own stream apart, which is what
// exercises consensus.
func (m *Softmax) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.Dim())
	for i := range dst {
		dst[i] = 0.01 * r.NormFloat64()
	}
}

// check panics on any argument that does not fit the model.
func (m *Softmax) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}

// Loss returns f(x) on the batch.
func (m *Softmax) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return meanCrossEntropy(m, &m.s, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), with the same value Loss
// returns. Per row, ∂CE/∂z = p − e_y with p = softmax(z), so the row adds
// (p − e_y) aᵀ to the W block and p − e_y to the c block; over the batch
// the W block is the matrix product Gᵀ A.
func (m *Softmax) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	return classifierGrad(m, &m.s, dst, x, d, idx)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *Softmax) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return classifierAccuracy(m, &m.s, x, d, idx)
}
