package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/vec"
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

	// Per-row scratch, named after the quantity it holds; r* are the
	// R-operator (directional derivative along u) of the same quantity.
	h, gh, rh, rgh []float64 // hidden layer: activation, ∂/∂h, R{h}, R{∂/∂h}
	z, rz          []float64 // output layer: logits (then probabilities), R{z}
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
		h: make([]float64, hidden), gh: make([]float64, hidden),
		rh: make([]float64, hidden), rgh: make([]float64, hidden),
		z: make([]float64, classes), rz: make([]float64, classes),
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

func (m *MLP) check(x []float64, d *Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}

// forward computes m.h = tanh(W₁a + b₁) and m.z = W₂h + b₂.
func (m *MLP) forward(x, a []float64) {
	D, H := m.features, m.hidden
	b1 := x[m.offB1():m.offW2()]
	vec.DotRows(m.h[:H], x, D, a)
	for k := range H {
		m.h[k] = math.Tanh(m.h[k] + b1[k])
	}
	m.outputs(m.z, x, m.h)
}

// outputs writes W₂v + b₂ into dst; with v = h these are the logits.
func (m *MLP) outputs(dst, x, v []float64) {
	H := m.hidden
	w2, b2 := x[m.offW2():m.offB2()], x[m.offB2():]
	for j := range m.classes {
		dst[j] = floats.Dot(w2[j*H:(j+1)*H], v) + b2[j]
	}
}

// Loss returns f(x) on the batch.
func (m *MLP) Loss(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	return meanCrossEntropy(m, m.z, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), by backpropagation:
//
//	g_z = p − e_y,  ∂W₂ = g_z hᵀ,  ∂b₂ = g_z,
//	g_h = W₂ᵀg_z,  g_s = g_h ⊙ (1 − h²),  ∂W₁ = g_s aᵀ,  ∂b₁ = g_s.
func (m *MLP) Grad(dst, x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	D, H, C := m.features, m.hidden, m.classes
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	w2 := x[m.offW2():m.offB2()]
	db1, dw2, db2 := dst[m.offB1():m.offW2()], dst[m.offW2():m.offB2()], dst[m.offB2():]
	gh := m.gh
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		a := d.Row(i)
		m.forward(x, a)
		lse := logSumExp(m.z)
		loss += lse - m.z[y]
		clear(gh)
		for j := range C {
			g := math.Exp(m.z[j] - lse)
			if j == y {
				g--
			}
			g *= inv // the 1/n of the mean, applied once here for every block
			vec.AddScaled(dw2[j*H:(j+1)*H], g, m.h)
			db2[j] += g
			vec.AddScaled(gh, g, w2[j*H:(j+1)*H])
		}
		for q := range H {
			gs := gh[q] * (1 - m.h[q]*m.h[q])
			vec.AddScaled(dst[q*D:(q+1)*D], gs, a)
			db1[q] += gs
		}
	}
	vec.AddScaled(dst, m.l2, x)
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
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
func (m *MLP) HVP(dst, x []float64, d *Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	D, H, C := m.features, m.hidden, m.classes
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	w2 := x[m.offW2():m.offB2()]
	ub1, u2 := u[m.offB1():m.offW2()], u[m.offW2():m.offB2()]
	db1, dw2, db2 := dst[m.offB1():m.offW2()], dst[m.offW2():m.offB2()], dst[m.offB2():]
	h, rh, gh, rgh := m.h, m.rh, m.gh, m.rgh
	p, rz := m.z, m.rz
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		a := d.Row(i)
		m.forward(x, a)

		// Forward R-pass.
		vec.DotRows(rh[:H], u, D, a)
		for q := range H {
			rh[q] = (1 - h[q]*h[q]) * (rh[q] + ub1[q])
		}
		m.outputs(rz, u, h) // U₂h + u_b₂
		for j := range C {
			rz[j] += floats.Dot(w2[j*H:(j+1)*H], rh)
		}
		lse := logSumExp(p)
		var s float64
		for j := range C {
			p[j] = math.Exp(p[j] - lse)
			s += p[j] * rz[j]
		}

		// Backward R-pass; gz_j = p_j − [j = y] and rgz_j are formed on
		// the fly, scaled by 1/n once.
		clear(gh)
		clear(rgh)
		for j := range C {
			gz := p[j]
			if j == y {
				gz--
			}
			gz *= inv
			rgz := inv * p[j] * (rz[j] - s)
			row := dw2[j*H : (j+1)*H]
			vec.AddScaled(row, rgz, h)
			vec.AddScaled(row, gz, rh)
			db2[j] += rgz
			vec.AddScaled(gh, gz, w2[j*H:(j+1)*H])
			vec.AddScaled(rgh, gz, u2[j*H:(j+1)*H])
			vec.AddScaled(rgh, rgz, w2[j*H:(j+1)*H])
		}
		for q := range H {
			rgs := rgh[q]*(1-h[q]*h[q]) - 2*gh[q]*h[q]*rh[q]
			vec.AddScaled(dst[q*D:(q+1)*D], rgs, a)
			db1[q] += rgs
		}
	}
	vec.AddScaled(dst, m.l2, u)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *MLP) Accuracy(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	return classifierAccuracy(m, m.z, x, d, idx)
}
