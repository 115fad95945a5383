package models

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/vec"
)

// Part of the row-by-row reference models (see rowref_test.go).

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
	cache           featureCaches[float64]
}

// DimX implements Bilevel: the output layer.
func (m *refHyperRep) DimX() int { return m.classes*m.hidden + m.classes }

// DimLambda implements Bilevel: the hidden layer.
func (m *refHyperRep) DimLambda() int { return m.hidden*m.features + m.hidden }

func (m *refHyperRep) check(x, lambda []float64, d *datasets.Dataset) {
	checkArgs(m, x, lambda, d, m.features, m.classes)
}

// row returns the features h of row i (computing them if needed).
func (m *refHyperRep) row(c *featureCache[float64], lambda []float64, i int) []float64 {
	H, D := m.hidden, m.features
	h := c.h[i*H : (i+1)*H : (i+1)*H]
	if m.cache.has(c, i) {
		return h
	}
	a := c.d.Row(i)
	b1 := lambda[H*D:]
	dotRowsFused(h, lambda, D, a) // W₁a
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
		m.z[j] = dotFused(x[j*H:(j+1)*H], h) + b2[j]
	}
	lse := vec.LogSumExp(m.z)
	for j := range m.classes {
		m.p[j] = math.Exp(m.z[j] - lse)
	}
	return lse - m.z[y]
}

// InnerLoss implements Bilevel: g.
func (m *refHyperRep) InnerLoss(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
func (m *refHyperRep) InnerGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	loss := m.outputGrad(dst, x, lambda, d, idx)
	floats.AddScaled(dst, m.mu, x)
	return loss + 0.5*m.mu*sumSquares(x)
}

// outputGrad writes the gradient of the mean cross-entropy in x into dst
// and returns the mean cross-entropy.
func (m *refHyperRep) outputGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
			addScaledFused(dst[j*H:(j+1)*H], g, h)
			db2[j] += g
		}
	}
	return loss * inv
}

// InnerHVP implements Bilevel: ∇²ₓₓg·u = mean_b R{p} ⊗ [h; 1] + μu with
// R{z} = U₂h + u_b₂ and R{p} = p ⊙ R{z} − p (pᵀR{z}).
func (m *refHyperRep) InnerHVP(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
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
			addScaledFused(dst[j*H:(j+1)*H], r, h)
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
		m.v[j] = dotFused(u[j*H:(j+1)*H], h) + ub2[j]
		s += m.p[j] * m.v[j]
	}
	return s
}

// InnerCross implements Bilevel: the gradient in λ of ⟨∇ₓg, u⟩ =
// mean_b (p − e_y)ᵀv with v = U₂h + u_b₂. Through h,
//
//	∂/∂h = W₂ᵀR{p} + U₂ᵀ(p − e_y),  ∂/∂s = σ'(s) ⊙ ∂/∂h,
//	∂W₁ = (∂/∂s) aᵀ,  ∂b₁ = ∂/∂s.
func (m *refHyperRep) InnerCross(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
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
			addScaledFused(m.gh, rp, x[j*H:(j+1)*H])
			addScaledFused(m.gh, g, u[j*H:(j+1)*H])
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
			addScaledFused(dst[q*D:(q+1)*D], gs, a)
			db1[q] += gs
		}
	}
}

// OuterGrad implements Bilevel: f = mean CE, ∂ₓf as InnerGrad without μ,
// ∂_λf by backpropagation into the hidden layer. dstX or dstLambda may be
// nil when that part is not wanted.
func (m *refHyperRep) OuterGrad(dstX, dstLambda, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	clearOuter(m, dstX, dstLambda)
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
				addScaledFused(dstX[j*H:(j+1)*H], inv*g, h)
				dstX[C*H+j] += inv * g
			}
			addScaledFused(m.gh, g, x[j*H:(j+1)*H])
		}
		if dstLambda != nil {
			m.backHidden(dstLambda, dstLambda[H*D:], h, d.Row(i), inv)
		}
	}
	return loss * inv
}

// Accuracy implements Bilevel.
func (m *refHyperRep) Accuracy(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
