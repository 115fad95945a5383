package models

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/vec"
)

// Part of the row-by-row reference models (see rowref_test.go).

// logits writes W a + c into m.z.
func (m *refSoftmax) logits(x, a []float64) {
	D, C := m.features, m.classes
	bias := x[C*D:]
	dotRowsFused(m.z[:C], x, D, a)
	for j := range C {
		m.z[j] += bias[j]
	}
}

// Loss returns f(x) on the batch.
func (m *refSoftmax) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return refMeanCrossEntropy(m, m.z, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), with the same value Loss
// returns. Per row, ∂CE/∂z = p − e_y with p = softmax(z), so the row adds
// (p − e_y) aᵀ to the W block and p − e_y to the c block.
func (m *refSoftmax) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	D, C := m.features, m.classes
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	gc := dst[C*D:]
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		a := d.Row(i)
		m.logits(x, a)
		lse := vec.LogSumExp(m.z)
		loss += lse - m.z[y]
		for j := range C {
			g := math.Exp(m.z[j] - lse)
			if j == y {
				g--
			}
			g *= inv
			addScaledFused(dst[j*D:(j+1)*D], g, a)
			gc[j] += g
		}
	}
	vec.AddScaled(dst, m.l2, x)
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *refSoftmax) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return refClassifierAccuracy(m, m.z, x, d, idx)
}

// HVP writes dst = ∇²f(x)·u. Per row the gradient is (p − e_y) ⊗ [a; 1], and
// its derivative along u = (U, u_c) is R{p} ⊗ [a; 1] with
//
//	R{z} = U a + u_c,  R{p} = p ⊙ R{z} − p (pᵀR{z})
//
// (the softmax Jacobian diag(p) − ppᵀ applied to R{z}).
func (m *refSoftmax) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	D, C := m.features, m.classes
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	uc := u[C*D:]
	dc := dst[C*D:]
	p, rz := m.z, m.rz
	for k := range n {
		i := rowIndex(d, idx, k)
		label(d, i, C) // the Hessian does not depend on y, but a bad label is still a bug
		a := d.Row(i)
		m.logits(x, a)
		lse := vec.LogSumExp(p)
		var s float64
		dotRowsFused(rz[:C], u, D, a)
		for j := range C {
			p[j] = math.Exp(p[j] - lse)
			rz[j] += uc[j]
			s += p[j] * rz[j]
		}
		for j := range C {
			r := inv * p[j] * (rz[j] - s)
			addScaledFused(dst[j*D:(j+1)*D], r, a)
			dc[j] += r
		}
	}
	floats.AddScaled(dst, m.l2, u)
}

// forward computes m.h = tanh(W₁a + b₁) and m.z = W₂h + b₂.
func (m *refMLP) forward(x, a []float64) {
	D, H := m.features, m.hidden
	b1 := x[m.offB1():m.offW2()]
	dotRowsFused(m.h[:H], x, D, a)
	for k := range H {
		m.h[k] = math.Tanh(m.h[k] + b1[k])
	}
	m.outputs(m.z, x, m.h)
}

// outputs writes W₂v + b₂ into dst; with v = h these are the logits.
func (m *refMLP) outputs(dst, x, v []float64) {
	H := m.hidden
	w2, b2 := x[m.offW2():m.offB2()], x[m.offB2():]
	for j := range m.classes {
		dst[j] = dotFused(w2[j*H:(j+1)*H], v) + b2[j]
	}
}

// Loss returns f(x) on the batch.
func (m *refMLP) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return refMeanCrossEntropy(m, m.z, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), by backpropagation:
//
//	g_z = p − e_y,  ∂W₂ = g_z hᵀ,  ∂b₂ = g_z,
//	g_h = W₂ᵀg_z,  g_s = g_h ⊙ (1 − h²),  ∂W₁ = g_s aᵀ,  ∂b₁ = g_s.
func (m *refMLP) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
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
		lse := vec.LogSumExp(m.z)
		loss += lse - m.z[y]
		clear(gh)
		for j := range C {
			g := math.Exp(m.z[j] - lse)
			if j == y {
				g--
			}
			g *= inv // the 1/n of the mean, applied once here for every block
			addScaledFused(dw2[j*H:(j+1)*H], g, m.h)
			db2[j] += g
			addScaledFused(gh, g, w2[j*H:(j+1)*H])
		}
		for q := range H {
			gs := gh[q] * (1 - m.h[q]*m.h[q])
			addScaledFused(dst[q*D:(q+1)*D], gs, a)
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
func (m *refMLP) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
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
		dotRowsFused(rh[:H], u, D, a)
		for q := range H {
			rh[q] = (1 - h[q]*h[q]) * (rh[q] + ub1[q])
		}
		m.outputs(rz, u, h) // U₂h + u_b₂
		for j := range C {
			rz[j] += dotFused(w2[j*H:(j+1)*H], rh)
		}
		lse := vec.LogSumExp(p)
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
			addScaledFused(row, rgz, h)
			addScaledFused(row, gz, rh)
			db2[j] += rgz
			addScaledFused(gh, gz, w2[j*H:(j+1)*H])
			addScaledFused(rgh, gz, u2[j*H:(j+1)*H])
			addScaledFused(rgh, rgz, w2[j*H:(j+1)*H])
		}
		for q := range H {
			rgs := rgh[q]*(1-h[q]*h[q]) - 2*gh[q]*h[q]*rh[q]
			addScaledFused(dst[q*D:(q+1)*D], rgs, a)
			db1[q] += rgs
		}
	}
	vec.AddScaled(dst, m.l2, u)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *refMLP) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return refClassifierAccuracy(m, m.z, x, d, idx)
}

// margin returns z = wᵀa + c.
func (m *refLogistic) margin(x, a []float64) float64 {
	return dotFused(x[:m.features], a) + x[m.features]
}

// Loss returns f(x) on the batch.
func (m *refLogistic) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
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
func (m *refLogistic) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
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
		addScaledFused(dst[:D], g, a)
		dst[D] += g
	}
	floats.AddScaled(dst, m.l2, x)
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// HVP writes dst = ∇²f(x)·u. Per row the Hessian is σ(1−σ)·[a; 1][a; 1]ᵀ,
// applied without forming it: σ(1−σ)·([a; 1]ᵀu)·[a; 1].
func (m *refLogistic) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
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
		r := inv * s * (1 - s) * (dotFused(u[:D], a) + u[D])
		addScaledFused(dst[:D], r, a)
		dst[D] += r
	}
	floats.AddScaled(dst, m.l2, u)
}

// Accuracy returns the fraction of rows where z > 0 exactly when y = 1.
func (m *refLogistic) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
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
