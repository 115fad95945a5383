package models

// The row-by-row implementation the batch code replaced (receivers
// renamed; its products fused as the batch code's are, rowref_fused_test.go)
// as the reference that batch_test.go compares the batch code with bit for
// bit.

import (
	"math"

	"hgpsim/datasets"
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

// The reference models take the shape and parameters of the models they
// check and add the per-row scratch the row code kept.
type refSoftmax struct {
	features, classes int
	l2                float64
	z, rz             []float64
}

type refLogistic struct {
	features int
	l2       float64
}

type refMLP struct {
	features, hidden, classes int
	l2                        float64
	h, gh, rh, rgh            []float64
	z, rz                     []float64
}

func newRefSoftmax(m *Net[float64]) *refSoftmax {
	return &refSoftmax{features: m.features, classes: m.classes, l2: m.l2,
		z: make([]float64, m.classes), rz: make([]float64, m.classes)}
}

func newRefLogistic(m *Net[float64]) *refLogistic {
	return &refLogistic{features: m.features, l2: m.l2}
}

func newRefMLP(m *Net[float64]) *refMLP {
	H, C := m.hidden, m.classes
	return &refMLP{features: m.features, hidden: H, classes: C, l2: m.l2,
		h: make([]float64, H), gh: make([]float64, H), rh: make([]float64, H),
		rgh: make([]float64, H), z: make([]float64, C), rz: make([]float64, C)}
}

func (m *refSoftmax) Dim() int           { return m.classes*m.features + m.classes }
func (m *refSoftmax) shape() (int, int)  { return m.features, m.classes }
func (m *refSoftmax) l2Rate() float64    { return m.l2 }
func (m *refLogistic) Dim() int          { return m.features + 1 }
func (m *refLogistic) shape() (int, int) { return m.features, 2 }
func (m *refLogistic) l2Rate() float64   { return m.l2 }
func (m *refMLP) offB1() int             { return m.hidden * m.features }
func (m *refMLP) offW2() int             { return m.offB1() + m.hidden }
func (m *refMLP) offB2() int             { return m.offW2() + m.classes*m.hidden }
func (m *refMLP) Dim() int               { return m.offB2() + m.classes }
func (m *refMLP) shape() (int, int)      { return m.features, m.classes }
func (m *refMLP) l2Rate() float64        { return m.l2 }

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
	dotRowsFused(z[:m.classes], x, D, a)
	for j := range m.classes {
		z[j] += bias[j]
	}
}

func (m *refSoftmax) rowJVP(v, x, a, u []float64) { m.rowLogits(v, u, a) }

func (m *refSoftmax) rowVJP(dst, x, a, g []float64) {
	D := m.features
	dc := dst[m.classes*D:]
	for j := range m.classes {
		addScaledFused(dst[j*D:(j+1)*D], g[j], a)
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
	addScaledFused(dst[:D], g[1], a)
	dst[D] += g[1]
}

func (m *refLogistic) rowVJPR(dst, x, a, u, g, rg []float64) { m.rowVJP(dst, x, a, rg) }

// rowLogits leaves h = tanh(W₁a + b₁) in m.h.
func (m *refMLP) rowLogits(z, x, a []float64) {
	D := m.features
	b1 := x[m.offB1():m.offW2()]
	dotRowsFused(m.h, x, D, a)
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
	dotRowsFused(rh[:H], u, D, a)
	for q := range H {
		rh[q] = (1 - h[q]*h[q]) * (rh[q] + ub1[q])
	}
	m.outputs(v, u, h)
	w2 := x[m.offW2():m.offB2()]
	for j := range m.classes {
		v[j] += dotFused(w2[j*H:(j+1)*H], rh)
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
		addScaledFused(dw2[j*H:(j+1)*H], g[j], h)
		db2[j] += g[j]
		addScaledFused(gh, g[j], w2[j*H:(j+1)*H])
	}
	for q := range H {
		gs := gh[q] * (1 - h[q]*h[q])
		addScaledFused(dst[q*D:(q+1)*D], gs, a)
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
		addScaledFused(row, rg[j], h)
		addScaledFused(row, g[j], rh)
		db2[j] += rg[j]
		addScaledFused(gh, g[j], w2[j*H:(j+1)*H])
		addScaledFused(rgh, g[j], u2[j*H:(j+1)*H])
		addScaledFused(rgh, rg[j], w2[j*H:(j+1)*H])
	}
	for q := range H {
		rgs := rgh[q]*(1-h[q]*h[q]) - 2*gh[q]*h[q]*rh[q]
		addScaledFused(dst[q*D:(q+1)*D], rgs, a)
		db1[q] += rgs
	}
}

// meanCrossEntropy is (1/|b|) Σ_b −log softmax(z_b)_{y_b} over the batch,
// with the logits from m.rowLogits written into the scratch z (length C).
func refMeanCrossEntropy(m refClassifier, z, x []float64, d *datasets.Dataset, idx []int) float64 {
	_, classes := m.shape()
	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, classes)
		m.rowLogits(z, x, d.Row(i))
		// −log softmax(z)_y = lse(z) − z_y.
		loss += vec.LogSumExp(z) - z[y]
	}
	return loss / float64(n)
}

// classifierAccuracy is the fraction of batch rows whose largest logit (from
// m.rowLogits, written into the scratch z) is the label.
func refClassifierAccuracy(m refClassifier, z, x []float64, d *datasets.Dataset, idx []int) float64 {
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

func (m *refSoftmax) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}

func (m *refLogistic) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, 2)
}

func (m *refMLP) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}
