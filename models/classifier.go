package models

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/vec"
)

// Classifier is a SecondOrder model whose per-row loss is the softmax
// cross-entropy of logits z(x; a) ∈ R^C of the row's features a:
//
//	f(x) = mean_b [lse(z_b) − z_b,y_b] + (L2/2)‖x‖².
//
// Softmax (z = W a + c), MLP (z = W₂ tanh(W₁a + b₁) + b₂) and Logistic
// (z = [0, wᵀa + c], whose cross-entropy is softplus(z₁) − y z₁) implement it.
//
// The bilevel problems (LabelWeights, Ensemble, MTLDA) build their losses
// from these per-row primitives: the logits, their Jacobian-vector product
// (forward R-operator), their vector-Jacobian product (backpropagation) and
// the R-operator of that backpropagation. The primitives are unexported, so
// the set of Classifiers is closed to this package.
type Classifier interface {
	SecondOrder

	// shape returns the number of features and classes the model fits.
	shape() (features, classes int)
	// l2Rate returns the model's regularization rate L2.
	l2Rate() float64
	// rowLogits writes z(x; a) into z (length C) and keeps in the model's
	// scratch what the row's rowJVP, rowVJP and rowVJPR need.
	rowLogits(z, x, a []float64)
	// rowJVP writes v = (∂z/∂x)·u into v (length C). It needs the
	// rowLogits of the same (x, a) to have run last, and it keeps what
	// rowVJPR needs.
	rowJVP(v, x, a, u []float64)
	// rowVJP adds (∂z/∂x)ᵀg to dst (length Dim). It needs the rowLogits of
	// the same (x, a).
	rowVJP(dst, x, a, g []float64)
	// rowVJPR adds (∂z/∂x)ᵀrg + Σ_j g_j ∇²z_j·u to dst: the derivative along u
	// of rowVJP(x, g) when g changes at the rate rg. It needs rowLogits and
	// then rowJVP(u) of the same (x, a).
	rowVJPR(dst, x, a, u, g, rg []float64)
}

// Every model of the package is a Classifier.
var (
	_ Classifier = (*Softmax)(nil)
	_ Classifier = (*Logistic)(nil)
	_ Classifier = (*MLP)(nil)
)

// Softmax: z = W a + c is linear in x, so ∇²z_j = 0.

func (m *Softmax) shape() (int, int) { return m.features, m.classes }
func (m *Softmax) l2Rate() float64   { return m.l2 }

func (m *Softmax) rowLogits(z, x, a []float64) {
	D := m.features
	bias := x[m.classes*D:]
	vec.DotRows(z[:m.classes], x, D, a)
	for j := range m.classes {
		z[j] += bias[j]
	}
}

func (m *Softmax) rowJVP(v, x, a, u []float64) { m.rowLogits(v, u, a) }

func (m *Softmax) rowVJP(dst, x, a, g []float64) {
	D := m.features
	dc := dst[m.classes*D:]
	for j := range m.classes {
		vec.AddScaled(dst[j*D:(j+1)*D], g[j], a)
		dc[j] += g[j]
	}
}

func (m *Softmax) rowVJPR(dst, x, a, u, g, rg []float64) { m.rowVJP(dst, x, a, rg) }

// Logistic: z = [0, wᵀa + c], linear in x; the constant logit 0 has no
// parameters, so g₀ never reaches dst.

func (m *Logistic) shape() (int, int) { return m.features, 2 }
func (m *Logistic) l2Rate() float64   { return m.l2 }

func (m *Logistic) rowLogits(z, x, a []float64) {
	z[0] = 0
	z[1] = m.margin(x, a)
}

func (m *Logistic) rowJVP(v, x, a, u []float64) { m.rowLogits(v, u, a) }

func (m *Logistic) rowVJP(dst, x, a, g []float64) {
	D := m.features
	vec.AddScaled(dst[:D], g[1], a)
	dst[D] += g[1]
}

func (m *Logistic) rowVJPR(dst, x, a, u, g, rg []float64) { m.rowVJP(dst, x, a, rg) }

// MLP: the forward, backward and R-passes of MLP.HVP, split at the logits.

func (m *MLP) shape() (int, int) { return m.features, m.classes }
func (m *MLP) l2Rate() float64   { return m.l2 }

// rowLogits leaves h = tanh(W₁a + b₁) in m.h.
func (m *MLP) rowLogits(z, x, a []float64) {
	D := m.features
	b1 := x[m.offB1():m.offW2()]
	vec.DotRows(m.h, x, D, a)
	for q := range m.hidden {
		m.h[q] = math.Tanh(m.h[q] + b1[q])
	}
	m.outputs(z, x, m.h)
}

// rowJVP leaves R{h} = (1 − h²) ⊙ (U₁a + u_b₁) in m.rh and writes
// R{z} = U₂h + W₂R{h} + u_b₂.
func (m *MLP) rowJVP(v, x, a, u []float64) {
	D, H := m.features, m.hidden
	h, rh := m.h, m.rh
	ub1 := u[m.offB1():m.offW2()]
	vec.DotRows(rh[:H], u, D, a)
	for q := range H {
		rh[q] = (1 - h[q]*h[q]) * (rh[q] + ub1[q])
	}
	m.outputs(v, u, h)
	w2 := x[m.offW2():m.offB2()]
	for j := range m.classes {
		v[j] += floats.Dot(w2[j*H:(j+1)*H], rh)
	}
}

// rowVJP backpropagates g = ∂ℓ/∂z as in MLP.Grad.
func (m *MLP) rowVJP(dst, x, a, g []float64) {
	D, H := m.features, m.hidden
	w2 := x[m.offW2():m.offB2()]
	db1, dw2, db2 := dst[m.offB1():m.offW2()], dst[m.offW2():m.offB2()], dst[m.offB2():]
	h, gh := m.h, m.gh
	clear(gh)
	for j := range m.classes {
		vec.AddScaled(dw2[j*H:(j+1)*H], g[j], h)
		db2[j] += g[j]
		vec.AddScaled(gh, g[j], w2[j*H:(j+1)*H])
	}
	for q := range H {
		gs := gh[q] * (1 - h[q]*h[q])
		vec.AddScaled(dst[q*D:(q+1)*D], gs, a)
		db1[q] += gs
	}
}

// rowVJPR is the backward R-pass of MLP.HVP with g_z = g and R{g_z} = rg.
func (m *MLP) rowVJPR(dst, x, a, u, g, rg []float64) {
	D, H := m.features, m.hidden
	w2, u2 := x[m.offW2():m.offB2()], u[m.offW2():m.offB2()]
	db1, dw2, db2 := dst[m.offB1():m.offW2()], dst[m.offW2():m.offB2()], dst[m.offB2():]
	h, rh, gh, rgh := m.h, m.rh, m.gh, m.rgh
	clear(gh)
	clear(rgh)
	for j := range m.classes {
		row := dw2[j*H : (j+1)*H]
		vec.AddScaled(row, rg[j], h)
		vec.AddScaled(row, g[j], rh)
		db2[j] += rg[j]
		vec.AddScaled(gh, g[j], w2[j*H:(j+1)*H])
		vec.AddScaled(rgh, g[j], u2[j*H:(j+1)*H])
		vec.AddScaled(rgh, rg[j], w2[j*H:(j+1)*H])
	}
	for q := range H {
		rgs := rgh[q]*(1-h[q]*h[q]) - 2*gh[q]*h[q]*rh[q]
		vec.AddScaled(dst[q*D:(q+1)*D], rgs, a)
		db1[q] += rgs
	}
}

// meanCrossEntropy is (1/|b|) Σ_b −log softmax(z_b)_{y_b} over the batch,
// with the logits from m.rowLogits written into the scratch z (length C).
func meanCrossEntropy(m Classifier, z, x []float64, d *Dataset, idx []int) float64 {
	_, classes := m.shape()
	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, classes)
		m.rowLogits(z, x, d.Row(i))
		// −log softmax(z)_y = lse(z) − z_y.
		loss += logSumExp(z) - z[y]
	}
	return loss / float64(n)
}

// classifierAccuracy is the fraction of batch rows whose largest logit (from
// m.rowLogits, written into the scratch z) is the label.
func classifierAccuracy(m Classifier, z, x []float64, d *Dataset, idx []int) float64 {
	_, classes := m.shape()
	n := batchSize(d, idx)
	correct := 0
	for k := range n {
		i := rowIndex(d, idx, k)
		m.rowLogits(z, x, d.Row(i))
		if argmax(z) == label(d, i, classes) {
			correct++
		}
	}
	return float64(correct) / float64(n)
}
