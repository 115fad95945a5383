package models

// The row-by-row implementation the batch code replaced, kept verbatim
// (receivers renamed) as the reference that batch_test.go compares the
// batch code with bit for bit.

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/vec"
)

// refClassifier is the row-level interface the models had.
type refClassifier interface {
	Dim() int
	shape() (features, classes int)
	l2Rate() float64
	rowLogits(z, x, a []float64)
	rowJVP(v, x, a, u []float64)
	rowVJP(dst, x, a, g []float64)
	rowVJPR(dst, x, a, u, g, rg []float64)
}

// The reference models wrap the new ones for their shape and parameters
// and add the per-row scratch the row code kept.
type refSoftmax struct {
	*Softmax
	z, rz []float64
}

type refLogistic struct{ *Logistic }

type refMLP struct {
	*MLP
	h, gh, rh, rgh []float64
	z, rz          []float64
}

func newRefSoftmax(m *Softmax) *refSoftmax {
	return &refSoftmax{Softmax: m, z: make([]float64, m.classes), rz: make([]float64, m.classes)}
}

func newRefMLP(m *MLP) *refMLP {
	H, C := m.hidden, m.classes
	return &refMLP{MLP: m, h: make([]float64, H), gh: make([]float64, H), rh: make([]float64, H),
		rgh: make([]float64, H), z: make([]float64, C), rz: make([]float64, C)}
}

// newRefMixture builds the reference mixture over the given reference
// bases (not cloned), as newMixture did.
func newRefMixture(bases []refClassifier, ensemble, labels bool, muK, muC float64) *refMixture {
	K := len(bases)
	D, C := bases[0].shape()
	m := &refMixture{
		bases: bases, off: make([]int, K+1),
		features: D, classes: C,
		ensemble: ensemble, labels: labels, muK: muK, muC: muC,
		logPi: make([]float64, K), pi: make([]float64, K),
		sLab: make([]float64, C), w: make([]float64, C),
		logp: make([]float64, K), r: make([]float64, K), s: make([]float64, K),
		mix: make([]float64, C), byClass: make([]float64, C),
	}
	for k, b := range bases {
		m.off[k+1] = m.off[k] + b.Dim()
	}
	for _, buf := range []*[][]float64{&m.z, &m.q, &m.v, &m.g, &m.rg} {
		*buf = make([][]float64, K)
		for k := range *buf {
			(*buf)[k] = make([]float64, C)
		}
	}
	m.logPi[0], m.pi[0] = 0, 1
	for c := range m.w {
		m.w[c] = 1
	}
	return m
}

func newRefWeighted(c refClassifier) *refWeighted {
	f, k := c.shape()
	return &refWeighted{c: c, z: make([]float64, k), g: make([]float64, k),
		rz: make([]float64, k), rg: make([]float64, k), features: f, cls: k}
}

func (m *refSoftmax) rowLogits(z, x, a []float64) {
	D := m.features
	bias := x[m.classes*D:]
	vec.DotRows(z[:m.classes], x, D, a)
	for j := range m.classes {
		z[j] += bias[j]
	}
}

func (m *refSoftmax) rowJVP(v, x, a, u []float64) { m.rowLogits(v, u, a) }

func (m *refSoftmax) rowVJP(dst, x, a, g []float64) {
	D := m.features
	dc := dst[m.classes*D:]
	for j := range m.classes {
		vec.AddScaled(dst[j*D:(j+1)*D], g[j], a)
		dc[j] += g[j]
	}
}

func (m *refSoftmax) rowVJPR(dst, x, a, u, g, rg []float64) { m.rowVJP(dst, x, a, rg) }

func (m *refLogistic) rowLogits(z, x, a []float64) {
	z[0] = 0
	z[1] = m.margin(x, a)
}

func (m *refLogistic) rowJVP(v, x, a, u []float64) { m.rowLogits(v, u, a) }

func (m *refLogistic) rowVJP(dst, x, a, g []float64) {
	D := m.features
	vec.AddScaled(dst[:D], g[1], a)
	dst[D] += g[1]
}

func (m *refLogistic) rowVJPR(dst, x, a, u, g, rg []float64) { m.rowVJP(dst, x, a, rg) }

// rowLogits leaves h = tanh(W₁a + b₁) in m.h.
func (m *refMLP) rowLogits(z, x, a []float64) {
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
func (m *refMLP) rowJVP(v, x, a, u []float64) {
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
func (m *refMLP) rowVJP(dst, x, a, g []float64) {
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
func (m *refMLP) rowVJPR(dst, x, a, u, g, rg []float64) {
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
func refMeanCrossEntropy(m refClassifier, z, x []float64, d *Dataset, idx []int) float64 {
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
func refClassifierAccuracy(m refClassifier, z, x []float64, d *Dataset, idx []int) float64 {
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

// logits writes W a + c into m.z.
func (m *refSoftmax) logits(x, a []float64) {
	D, C := m.features, m.classes
	bias := x[C*D:]
	vec.DotRows(m.z[:C], x, D, a)
	for j := range C {
		m.z[j] += bias[j]
	}
}

// Loss returns f(x) on the batch.
func (m *refSoftmax) Loss(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	return refMeanCrossEntropy(m, m.z, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), with the same value Loss
// returns. Per row, ∂CE/∂z = p − e_y with p = softmax(z), so the row adds
// (p − e_y) aᵀ to the W block and p − e_y to the c block.
func (m *refSoftmax) Grad(dst, x []float64, d *Dataset, idx []int) float64 {
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
		lse := logSumExp(m.z)
		loss += lse - m.z[y]
		for j := range C {
			g := math.Exp(m.z[j] - lse)
			if j == y {
				g--
			}
			g *= inv
			vec.AddScaled(dst[j*D:(j+1)*D], g, a)
			gc[j] += g
		}
	}
	vec.AddScaled(dst, m.l2, x)
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *refSoftmax) Accuracy(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	return refClassifierAccuracy(m, m.z, x, d, idx)
}

// HVP writes dst = ∇²f(x)·u. Per row the gradient is (p − e_y) ⊗ [a; 1], and
// its derivative along u = (U, u_c) is R{p} ⊗ [a; 1] with
//
//	R{z} = U a + u_c,  R{p} = p ⊙ R{z} − p (pᵀR{z})
//
// (the softmax Jacobian diag(p) − ppᵀ applied to R{z}).
func (m *refSoftmax) HVP(dst, x []float64, d *Dataset, idx []int, u []float64) {
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
		lse := logSumExp(p)
		var s float64
		vec.DotRows(rz[:C], u, D, a)
		for j := range C {
			p[j] = math.Exp(p[j] - lse)
			rz[j] += uc[j]
			s += p[j] * rz[j]
		}
		for j := range C {
			r := inv * p[j] * (rz[j] - s)
			floats.AddScaled(dst[j*D:(j+1)*D], r, a)
			dc[j] += r
		}
	}
	floats.AddScaled(dst, m.l2, u)
}

// forward computes m.h = tanh(W₁a + b₁) and m.z = W₂h + b₂.
func (m *refMLP) forward(x, a []float64) {
	D, H := m.features, m.hidden
	b1 := x[m.offB1():m.offW2()]
	vec.DotRows(m.h[:H], x, D, a)
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
		dst[j] = floats.Dot(w2[j*H:(j+1)*H], v) + b2[j]
	}
}

// Loss returns f(x) on the batch.
func (m *refMLP) Loss(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	return refMeanCrossEntropy(m, m.z, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), by backpropagation:
//
//	g_z = p − e_y,  ∂W₂ = g_z hᵀ,  ∂b₂ = g_z,
//	g_h = W₂ᵀg_z,  g_s = g_h ⊙ (1 − h²),  ∂W₁ = g_s aᵀ,  ∂b₁ = g_s.
func (m *refMLP) Grad(dst, x []float64, d *Dataset, idx []int) float64 {
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
func (m *refMLP) HVP(dst, x []float64, d *Dataset, idx []int, u []float64) {
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
func (m *refMLP) Accuracy(x []float64, d *Dataset, idx []int) float64 {
	m.check(x, d)
	return refClassifierAccuracy(m, m.z, x, d, idx)
}

// margin returns z = wᵀa + c.
func (m *refLogistic) margin(x, a []float64) float64 {
	return floats.Dot(x[:m.features], a) + x[m.features]
}

// Loss returns f(x) on the batch.
func (m *refLogistic) Loss(x []float64, d *Dataset, idx []int) float64 {
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
func (m *refLogistic) Grad(dst, x []float64, d *Dataset, idx []int) float64 {
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
func (m *refLogistic) HVP(dst, x []float64, d *Dataset, idx []int, u []float64) {
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
func (m *refLogistic) Accuracy(x []float64, d *Dataset, idx []int) float64 {
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

// mixture implements LabelWeights, Ensemble and MTLDA: a mixture of K
// classifiers with optional ensemble weights λ^K and optional label weights
// λ^C, in that order in λ. Without ensemble weights K = 1 and π = [1];
// without label weights w = 1. The notation is that of Ensemble's comment.
type refMixture struct {
	bases             []refClassifier
	off               []int // x_k = x[off[k]:off[k+1]]
	features, classes int
	ensemble, labels  bool    // which blocks λ has
	muK, muC          float64 // outer L2 rates of λ^K and λ^C

	// Set from λ by setLambda.
	logPi, pi []float64 // K: log π and π
	sLab, w   []float64 // C: softmax(λ^C) and the label weights C·sLab

	// Per-row scratch.
	z, q, v, g, rg [][]float64 // K×C: logits, probabilities, R{z}, ∂ℓ/∂z, R{∂ℓ/∂z}
	logp, r, s     []float64   // K: log p_k(y), responsibilities, R{log p_k}
	mix, byClass   []float64   // C: mixture probabilities (Accuracy), S_c (InnerCross)

}

// nK and nC are the lengths of the blocks λ^K and λ^C (0 when absent).
func (m *refMixture) nK() int {
	if m.ensemble {
		return len(m.bases)
	}
	return 0
}

func (m *refMixture) nC() int {
	if m.labels {
		return m.classes
	}
	return 0
}

func (m *refMixture) DimX() int { return m.off[len(m.bases)] }

func (m *refMixture) DimLambda() int { return m.nK() + m.nC() }

// xk returns the block of base k in a vector of length DimX.
func (m *refMixture) xk(x []float64, k int) []float64 { return x[m.off[k]:m.off[k+1]] }

// start checks the arguments every method shares, sets the λ-dependent
// weights and returns the batch size.
func (m *refMixture) start(x, lambda []float64, d *Dataset, idx []int) int {
	checkLen("x", x, m.DimX())
	checkLen("lambda", lambda, m.DimLambda())
	checkData(d, m.features, m.classes)
	if m.ensemble {
		logSoftmax(m.logPi, lambda[:m.nK()])
		for k, l := range m.logPi {
			m.pi[k] = math.Exp(l)
		}
	}
	if m.labels {
		logSoftmax(m.sLab, lambda[m.nK():])
		C := float64(m.classes)
		for c, l := range m.sLab {
			m.sLab[c] = math.Exp(l)
			m.w[c] = C * m.sLab[c]
		}
	}
	return batchSize(d, idx)
}

// row runs the forward pass of every base on features a with label y, fills
// z, q, logp and r, and returns ℓ = −log P(y | a).
func (m *refMixture) row(x, a []float64, y int) float64 {
	for k, b := range m.bases {
		z, q := m.z[k], m.q[k]
		b.rowLogits(z, m.xk(x, k), a)
		lse := logSumExp(z)
		for j, zj := range z {
			q[j] = math.Exp(zj - lse)
		}
		m.logp[k] = z[y] - lse
	}
	if len(m.bases) == 1 {
		m.r[0] = 1
		return -m.logp[0]
	}
	for k := range m.r {
		m.r[k] = m.logPi[k] + m.logp[k]
	}
	logP := logSumExp(m.r)
	for k, l := range m.r {
		m.r[k] = math.Exp(l - logP)
	}
	return -logP
}

// rowR runs the forward R-pass along u after row: it fills v and s and
// returns s̄ = Σ_k r_k s_k.
func (m *refMixture) rowR(x, a, u []float64, y int) float64 {
	var sBar float64
	for k, b := range m.bases {
		v := m.v[k]
		b.rowJVP(v, m.xk(x, k), a, m.xk(u, k))
		m.s[k] = v[y] - floats.Dot(m.q[k], v)
		sBar += m.r[k] * m.s[k]
	}
	return sBar
}

// backprop adds scale·Σ_k J_kᵀ r_k (q_k − e_y) to dst.
func (m *refMixture) backprop(dst, x, a []float64, y int, scale float64) {
	for k, b := range m.bases {
		g, q := m.g[k], m.q[k]
		c := scale * m.r[k]
		for j, qj := range q {
			g[j] = c * qj
		}
		g[y] -= c
		b.rowVJP(m.xk(dst, k), m.xk(x, k), a, g)
	}
}

// regularize returns Σ_k (L2_k/2)‖x_k‖² and, when dst is not nil, adds
// L2_k·v_k to dst's blocks.
func (m *refMixture) regularize(dst, x, v []float64) float64 {
	var reg float64
	for k, b := range m.bases {
		l2 := b.l2Rate()
		reg += 0.5 * l2 * sumSquares(m.xk(x, k))
		if dst != nil {
			floats.AddScaled(m.xk(dst, k), l2, m.xk(v, k))
		}
	}
	return reg
}

// InnerLoss returns f(x, λ).
func (m *refMixture) InnerLoss(x, lambda []float64, d *Dataset, idx []int) float64 {
	n := m.start(x, lambda, d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, m.classes)
		loss += m.w[y] * m.row(x, d.Row(i), y)
	}
	return loss/float64(n) + m.regularize(nil, x, nil)
}

// InnerGrad writes ∇ₓf into dst and returns f, with the value InnerLoss
// returns.
func (m *refMixture) InnerGrad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {
	n := m.start(x, lambda, d, idx)
	checkLen("dst", dst, m.DimX())
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, m.classes)
		a := d.Row(i)
		loss += m.w[y] * m.row(x, a, y)
		m.backprop(dst, x, a, y, inv*m.w[y])
	}
	return loss/float64(n) + m.regularize(dst, x, x)
}

// products writes InnerHVP into hv and InnerCross into cross (a nil
// destination is skipped) from one forward and one R-pass per row. With a
// cache, the forward pass of row k is read from (or, on the cache's first
// use, written to) the cache instead of being recomputed.
func (m *refMixture) products(hv, cross, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	n := m.start(x, lambda, d, idx)
	checkLen("u", u, m.DimX())
	inv := 1 / float64(n)
	if hv != nil {
		clear(hv)
	}
	if cross != nil {
		clear(cross)
		clear(m.byClass)
	}
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, m.classes)
		a := d.Row(i)
		m.row(x, a, y)
		sBar := m.rowR(x, a, u, y)
		if hv != nil {
			for kb, b := range m.bases {
				q, v, g, rg := m.q[kb], m.v[kb], m.g[kb], m.rg[kb]
				c := inv * m.w[y] * m.r[kb]
				ds := m.s[kb] - sBar
				qv := v[y] - m.s[kb] // q_kᵀv_k
				for j, qj := range q {
					e := qj
					if j == y {
						e--
					}
					g[j] = c * e
					rg[j] = c * (ds*e + qj*(v[j]-qv))
				}
				b.rowVJPR(m.xk(hv, kb), m.xk(x, kb), a, m.xk(u, kb), g, rg)
			}
		}
		if cross != nil {
			if m.ensemble {
				c := inv * m.w[y]
				for kb, rk := range m.r {
					cross[kb] -= c * rk * (m.s[kb] - sBar)
				}
			}
			m.byClass[y] -= inv * sBar
		}
	}
	if hv != nil {
		m.regularize(hv, x, u)
	}
	if cross != nil && m.labels {
		// ∂w_c/∂λ_j = C s_c (δ_cj − s_j), so the block is
		// C s_j (S_j − Σ_c s_c S_c).
		avg := floats.Dot(m.sLab, m.byClass)
		C := float64(m.classes)
		nK := m.nK()
		for j, sj := range m.sLab {
			cross[nK+j] = C * sj * (m.byClass[j] - avg)
		}
	}
}

// OuterGrad writes ∂ₓF into dstX and ∂_λF into dstLambda and returns F:
// ∂ₓF backpropagates the unweighted mixture cross-entropy, the λ^K block is
// (1/n) Σ_b (π − r_b) + μ_K λ^K and the λ^C block μ_C λ^C.
func (m *refMixture) OuterGrad(dstX, dstLambda, x, lambda []float64, d *Dataset, idx []int) float64 {
	n := m.start(x, lambda, d, idx)
	checkLen("dstX", dstX, m.DimX())
	checkLen("dstLambda", dstLambda, m.DimLambda())
	inv := 1 / float64(n)
	clear(dstX)
	clear(dstLambda)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, m.classes)
		a := d.Row(i)
		loss += m.row(x, a, y)
		m.backprop(dstX, x, a, y, inv)
		if m.ensemble {
			for kb, rk := range m.r {
				dstLambda[kb] += inv * (m.pi[kb] - rk)
			}
		}
	}
	nK := m.nK()
	lK, lC := lambda[:nK], lambda[nK:]
	floats.AddScaled(dstLambda[:nK], m.muK, lK)
	floats.AddScaled(dstLambda[nK:], m.muC, lC)
	return loss/float64(n) + 0.5*m.muK*sumSquares(lK) + 0.5*m.muC*sumSquares(lC)
}

// Accuracy returns the fraction of rows whose arg-max of the mixture
// P(· | a) = Σ_k π_k q_k is the label; with one base, the arg-max of its
// logits, exactly as the base model's Accuracy.
func (m *refMixture) Accuracy(x, lambda []float64, d *Dataset, idx []int) float64 {
	n := m.start(x, lambda, d, idx)
	correct := 0
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, m.classes)
		m.row(x, d.Row(i), y)
		pred := 0
		if len(m.bases) == 1 {
			pred = argmax(m.z[0])
		} else {
			clear(m.mix)
			for kb, q := range m.q {
				floats.AddScaled(m.mix, m.pi[kb], q)
			}
			pred = argmax(m.mix)
		}
		if pred == y {
			correct++
		}
	}
	return float64(correct) / float64(n)
}

// SampleWeighted is the per-sample weighted loss of Comm-FedBiO (issue 11)
// on a Classifier's cross-entropy ℓ(x; s):
//
//	g(x; λ) = (1/|b|) Σ_{j∈b} λ_j ℓ(x; s_j) + (L2/2)‖x‖²
//
// λ is indexed by the row of the Dataset (len d.N); nil means λ ≡ 1, the
// plain loss. The gradient, the Hessian-vector product and the per-sample
// directional derivatives ⟨∇ℓ(x; s_j), u⟩ are exact (back-propagation and
// the forward R-operator). The last give the hyper-gradient block of a
// client: ∂h/∂λ_j = −(1/N)⟨∇ℓ(x; s_j), v*⟩ with H v* = ∇ₓF.
//
// A value keeps scratch: one goroutine at a time; Clone for others.
type refWeighted struct {
	c             refClassifier
	z, g, rz, rg  []float64
	features, cls int
}

// probs turns the logits in z into probabilities in g, minus e_y, and
// returns the row's cross-entropy.
func (w *refWeighted) probs(y int) float64 {
	lse := logSumExp(w.z)
	for j := range w.cls {
		w.g[j] = math.Exp(w.z[j] - lse)
	}
	loss := lse - w.z[y]
	w.g[y]--
	return loss
}

// Loss returns g(x; λ) on the batch.
func (w *refWeighted) Loss(x, lambda []float64, d *Dataset, idx []int) float64 {

	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, w.cls)
		w.c.rowLogits(w.z, x, d.Row(i))
		loss += weightOf(lambda, i) * (logSumExp(w.z) - w.z[y])
	}
	return loss/float64(n) + 0.5*w.c.l2Rate()*sumSquares(x)
}

// Grad writes ∇ₓg(x; λ) into dst and returns g. dst must not alias x.
func (w *refWeighted) Grad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {

	checkVec("dst", dst, w.c.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, w.cls)
		lam := weightOf(lambda, i)
		a := d.Row(i)
		w.c.rowLogits(w.z, x, a)
		loss += lam * w.probs(y)
		if lam == 0 {
			continue
		}
		floats.Scale(lam*inv, w.g)
		w.c.rowVJP(dst, x, a, w.g)
	}
	floats.AddScaled(dst, w.c.l2Rate(), x)
	return loss*inv + 0.5*w.c.l2Rate()*sumSquares(x)
}

// HVP writes dst = ∇²ₓg(x; λ)·u. dst must not alias x or u.
func (w *refWeighted) HVP(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {

	checkVec("dst", dst, w.c.Dim())
	checkVec("u", u, w.c.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, w.cls)
		lam := weightOf(lambda, i)
		if lam == 0 {
			continue
		}
		a := d.Row(i)
		w.c.rowLogits(w.z, x, a)
		w.probs(y)
		w.c.rowJVP(w.rz, x, a, u)
		// R{p} = p ⊙ R{z} − p (pᵀR{z}), with p = g + e_y.
		var s float64
		for j := range w.cls {
			p := w.g[j]
			if j == y {
				p++
			}
			s += p * w.rz[j]
		}
		c := lam * inv
		for j := range w.cls {
			p := w.g[j]
			if j == y {
				p++
			}
			w.rg[j] = c * p * (w.rz[j] - s)
			w.g[j] *= c
		}
		w.c.rowVJPR(dst, x, a, u, w.g, w.rg)
	}
	floats.AddScaled(dst, w.c.l2Rate(), u)
}

// SampleDirectional writes dst[k] = ⟨∇ℓ(x; s_i), u⟩ for the k-th selected
// row i (no regularizer, no weight): the forward R-operator of the row's
// cross-entropy, (p − e_y)ᵀ R{z}. It costs two forward passes per row.
func (w *refWeighted) SampleDirectional(dst, x []float64, d *Dataset, idx []int, u []float64) {

	checkVec("u", u, w.c.Dim())
	n := batchSize(d, idx)
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, w.cls)
		a := d.Row(i)
		w.c.rowLogits(w.z, x, a)
		w.probs(y)
		w.c.rowJVP(w.rz, x, a, u)
		dst[k] = floats.Dot(w.g, w.rz)
	}
}

// SampleGrad writes ∇ℓ(x; s_i) of row i into dst (no regularizer) and
// returns ℓ.
func (w *refWeighted) SampleGrad(dst, x []float64, d *Dataset, i int) float64 {

	checkVec("dst", dst, w.c.Dim())
	clear(dst)
	y := label(d, i, w.cls)
	a := d.Row(i)
	w.c.rowLogits(w.z, x, a)
	loss := w.probs(y)
	w.c.rowVJP(dst, x, a, w.g)
	return loss
}

// refHyperRep is HyperRep's row-by-row code.
func newRefHyperRep(features, hidden, classes int, mu float64, relu bool) *refHyperRep {
	return &refHyperRep{features: features, hidden: hidden, classes: classes, mu: mu, relu: relu,
		z: make([]float64, classes), p: make([]float64, classes), v: make([]float64, classes),
		gz: make([]float64, classes), gh: make([]float64, hidden)}
}

type refHyperRep struct {
	features, hidden, classes int
	mu                        float64
	relu                      bool

	z, p, v, gz, gh []float64 // per-row scratch
	cache           featureCaches
}

// DimX implements Bilevel: the output layer.
func (m *refHyperRep) DimX() int { return m.classes*m.hidden + m.classes }

// DimLambda implements Bilevel: the hidden layer.
func (m *refHyperRep) DimLambda() int { return m.hidden*m.features + m.hidden }

func (m *refHyperRep) check(x, lambda []float64, d *Dataset) {
	checkVec("x", x, m.DimX())
	checkVec("lambda", lambda, m.DimLambda())
	checkData(d, m.features, m.classes)
}

// row returns the features h of row i (computing them if needed).
func (m *refHyperRep) row(c *featureCache, lambda []float64, i int) []float64 {
	H, D := m.hidden, m.features
	h := c.h[i*H : (i+1)*H : (i+1)*H]
	if m.cache.has(c, i) {
		return h
	}
	a := c.d.Row(i)
	b1 := lambda[H*D:]
	vec.DotRows(h, lambda, D, a) // W₁a, four rows at a time, summed as floats.Dot
	for k := range H {
		s := h[k] + b1[k]
		if m.relu {
			h[k] = max(s, 0)
		} else {
			h[k] = math.Tanh(s)
		}
	}
	m.cache.mark(c, i)
	return h
}

// dsigma returns σ'(s) from h = σ(s).
func (m *refHyperRep) dsigma(h float64) float64 {
	if m.relu {
		if h > 0 {
			return 1
		}
		return 0
	}
	return 1 - h*h
}

// probs sets m.z to the logits W₂h + b₂ and m.p to softmax(z); it returns
// the cross-entropy of label y.
func (m *refHyperRep) probs(x, h []float64, y int) float64 {
	H := m.hidden
	b2 := x[m.classes*H:]
	for j := range m.classes {
		m.z[j] = floats.Dot(x[j*H:(j+1)*H], h) + b2[j]
	}
	lse := logSumExp(m.z)
	for j := range m.classes {
		m.p[j] = math.Exp(m.z[j] - lse)
	}
	return lse - m.z[y]
}

// InnerLoss implements Bilevel: g.
func (m *refHyperRep) InnerLoss(x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		loss += m.probs(x, m.row(c, lambda, i), label(d, i, m.classes))
	}
	return loss/float64(n) + 0.5*m.mu*sumSquares(x)
}

// InnerGrad implements Bilevel: ∇ₓg = mean_b (p − e_y) ⊗ [h; 1] + μx.
func (m *refHyperRep) InnerGrad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	loss := m.outputGrad(dst, x, lambda, d, idx)
	floats.AddScaled(dst, m.mu, x)
	return loss + 0.5*m.mu*sumSquares(x)
}

// outputGrad writes the gradient of the mean cross-entropy in x into dst
// and returns the mean cross-entropy.
func (m *refHyperRep) outputGrad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {
	H, C := m.hidden, m.classes
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	db2 := dst[C*H:]
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		h := m.row(c, lambda, i)
		loss += m.probs(x, h, y)
		for j := range C {
			g := m.p[j]
			if j == y {
				g--
			}
			g *= inv
			floats.AddScaled(dst[j*H:(j+1)*H], g, h)
			db2[j] += g
		}
	}
	return loss * inv
}

// InnerHVP implements Bilevel: ∇²ₓₓg·u = mean_b R{p} ⊗ [h; 1] + μu with
// R{z} = U₂h + u_b₂ and R{p} = p ⊙ R{z} − p (pᵀR{z}).
func (m *refHyperRep) InnerHVP(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	checkVec("u", u, m.DimX())
	H, C := m.hidden, m.classes
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	db2 := dst[C*H:]
	for k := range n {
		i := rowIndex(d, idx, k)
		h := m.row(c, lambda, i)
		m.probs(x, h, label(d, i, C))
		s := m.rz(u, h)
		for j := range C {
			r := inv * m.p[j] * (m.v[j] - s)
			floats.AddScaled(dst[j*H:(j+1)*H], r, h)
			db2[j] += r
		}
	}
	floats.AddScaled(dst, m.mu, u)
}

// rz sets m.v = U₂h + u_b₂ (R{z} along u) and returns pᵀv.
func (m *refHyperRep) rz(u, h []float64) float64 {
	H := m.hidden
	ub2 := u[m.classes*H:]
	var s float64
	for j := range m.classes {
		m.v[j] = floats.Dot(u[j*H:(j+1)*H], h) + ub2[j]
		s += m.p[j] * m.v[j]
	}
	return s
}

// InnerCross implements Bilevel: the gradient in λ of ⟨∇ₓg, u⟩ =
// mean_b (p − e_y)ᵀv with v = U₂h + u_b₂. Through h,
//
//	∂/∂h = W₂ᵀR{p} + U₂ᵀ(p − e_y),  ∂/∂s = σ'(s) ⊙ ∂/∂h,
//	∂W₁ = (∂/∂s) aᵀ,  ∂b₁ = ∂/∂s.
func (m *refHyperRep) InnerCross(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimLambda())
	checkVec("u", u, m.DimX())
	H, C, D := m.hidden, m.classes, m.features
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	db1 := dst[H*D:]
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		h := m.row(c, lambda, i)
		m.probs(x, h, y)
		s := m.rz(u, h)
		clear(m.gh)
		for j := range C {
			rp := m.p[j] * (m.v[j] - s)
			g := m.p[j]
			if j == y {
				g--
			}
			floats.AddScaled(m.gh, rp, x[j*H:(j+1)*H])
			floats.AddScaled(m.gh, g, u[j*H:(j+1)*H])
		}
		m.backHidden(dst, db1, h, d.Row(i), inv)
	}
}

// backHidden adds inv·(σ'(s) ⊙ m.gh) aᵀ to W₁'s block of dst and the same
// vector to db1.
func (m *refHyperRep) backHidden(dst, db1, h, a []float64, inv float64) {
	D := m.features
	for q := range m.hidden {
		gs := inv * m.gh[q] * m.dsigma(h[q])
		if gs != 0 {
			vec.AddScaled(dst[q*D:(q+1)*D], gs, a)
			db1[q] += gs
		}
	}
}

// OuterGrad implements Bilevel: f = mean CE, ∂ₓf as InnerGrad without μ,
// ∂_λf by backpropagation into the hidden layer. dstX or dstLambda may be
// nil when that part is not wanted.
func (m *refHyperRep) OuterGrad(dstX, dstLambda, x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	if dstX != nil {
		checkVec("dstX", dstX, m.DimX())
		clear(dstX)
	}
	if dstLambda != nil {
		checkVec("dstLambda", dstLambda, m.DimLambda())
		clear(dstLambda)
	}
	H, C, D := m.hidden, m.classes, m.features
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		h := m.row(c, lambda, i)
		loss += m.probs(x, h, y)
		clear(m.gh)
		for j := range C {
			g := m.p[j]
			if j == y {
				g--
			}
			if dstX != nil {
				floats.AddScaled(dstX[j*H:(j+1)*H], inv*g, h)
				dstX[C*H+j] += inv * g
			}
			floats.AddScaled(m.gh, g, x[j*H:(j+1)*H])
		}
		if dstLambda != nil {
			m.backHidden(dstLambda, dstLambda[H*D:], h, d.Row(i), inv)
		}
	}
	return loss * inv
}

// Accuracy implements Bilevel.
func (m *refHyperRep) Accuracy(x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	right := 0
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, m.classes)
		m.probs(x, m.row(c, lambda, i), y)
		if argmax(m.z) == y {
			right++
		}
	}
	return float64(right) / float64(n)
}
