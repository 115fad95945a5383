package models

import (
	"fmt"
	"hgpsim/datasets"
	"math"
	"math/rand/v2"
)

// MLP is a one-hidden-layer perceptron with tanh activation and softmax
// cross-entropy output, with L2 regularization of all parameters:
//
//	h = tanh(W₁a + b₁),  z = W₂h + b₂,
//	f(x) = mean_b CE(softmax(z_b), y_b) + (L2/2)‖x‖²
//
// f is not convex; it is the model for experiments beyond Assumption 1.
//
// Layout of x: W₁ (Hidden×Features, row-major), b₁ (Hidden),
// W₂ (Classes×Hidden, row-major), b₂ (Classes).
//
// An *MLP holds scratch buffers: use it from one goroutine and Clone it for
// others.
type MLP struct {
	features, hidden, classes int
	l2                        float64

	// The rows of the last batchLogits and per-row scratch (chunk rows
	// each), named after the quantity it holds; r* are the R-operator
	// (directional derivative along u) of the same quantity.
	a       []float64
	n       int
	hr      []float64 // n × 2·Hidden: h_b, then R{h_b}
	gh, rgh []float64 // n × Hidden: ∂/∂h, R{∂/∂h} (then those of the pre-activation)
	t       []float64 // n × Classes: W₂R{h}
	gg, gi  []float64 // 2n × Classes: the operands of batchVJPR, interleaved
	wu      []float64 // 2·Classes × Hidden: rows of U₂ and W₂, interleaved
	s       classifierScratch
}

// NewMLP returns an MLP. It panics if features < 1, hidden < 1, classes < 2
// or l2 is negative or not finite.
func NewMLP(features, hidden, classes int, l2 float64) *MLP {
	if features < 1 || hidden < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewMLP(features=%d, hidden=%d, classes=%d): need features >= 1, hidden >= 1, classes >= 2",
			features, hidden, classes))
	}
	checkL2("NewMLP", l2)
	return &MLP{
		features: features, hidden: hidden, classes: classes, l2: l2,
	}
}

// Offsets of the blocks of x.
func (m *MLP) offB1() int { return m.hidden * m.features }
func (m *MLP) offW2() int { return m.offB1() + m.hidden }
func (m *MLP) offB2() int { return m.offW2() + m.classes*m.hidden }

// Dim returns Hidden·Features + Hidden + Classes·Hidden + Classes.
func (m *MLP) Dim() int { return m.offB2() + m.classes }

// Clone returns an MLP with the same shape and L2 and its own scratch.
func (m *MLP) Clone() Model { return NewMLP(m.features, m.hidden, m.classes, m.l2) }

// Init draws W₁ from N(0, 1/Features) and W₂ from N(0, 1/Hidden) and sets
// the biases to 0. Variance 1/fan-in keeps the pre-activations of order one,
// where tanh is neither linear nor saturated; the random weights break the
// symmetry between hidden units, which zero biases do not need to.
func (m *MLP) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.Dim())
	clear(dst)
	s1 := 1 / math.Sqrt(float64(m.features))
	for i := range dst[:m.offB1()] {
		dst[i] = s1 * r.NormFloat64()
	}
	s2 := 1 / math.Sqrt(float64(m.hidden))
	for i := m.offW2(); i < m.offB2(); i++ {
		dst[i] = s2 * r.NormFloat64()
	}
}

func (m *MLP) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}

// Loss returns f(x) on the batch.
func (m *MLP) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return meanCrossEntropy(m, &m.s, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), by backpropagation:
//
//	g_z = p − e_y,  ∂W₂ = g_z hᵀ,  ∂b₂ = g_z,
//	g_h = W₂ᵀg_z,  g_s = g_h ⊙ (1 − h²),  ∂W₁ = g_s aᵀ,  ∂b₁ = g_s.
func (m *MLP) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	return classifierGrad(m, &m.s, dst, x, d, idx)
}

// HVP writes dst = ∇²f(x)·u with Pearlmutter's R-operator: each quantity q
// of the forward and backward pass of Grad gets R{q}, its derivative along
// u = (U₁, u_b₁, U₂, u_b₂), and R{∂x} is the product. Forward:
//
//	R{s} = U₁a + u_b₁,  R{h} = (1 − h²) ⊙ R{s},  R{z} = U₂h + W₂R{h} + u_b₂,
//	R{g_z} = R{p} = p ⊙ R{z} − p (pᵀR{z});
//
// backward:
//
//	R{∂W₂} = R{g_z} hᵀ + g_z R{h}ᵀ,  R{∂b₂} = R{g_z},
//	R{g_h} = U₂ᵀg_z + W₂ᵀR{g_z},
//	R{g_s} = R{g_h} ⊙ (1 − h²) − 2 g_h ⊙ h ⊙ R{h},
//	R{∂W₁} = R{g_s} aᵀ,  R{∂b₁} = R{g_s}.
func (m *MLP) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	classifierHVP(m, &m.s, dst, x, d, idx, u)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *MLP) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return classifierAccuracy(m, &m.s, x, d, idx)
}
