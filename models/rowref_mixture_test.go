package models

import (
	"hgpsim/datasets"
	"hgpsim/internal/vec"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Part of the row-by-row reference models (see rowref_test.go).

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
func (m *refMixture) start(x, lambda []float64, d *datasets.Dataset, idx []int) int {
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
		lse := vec.LogSumExp(z)
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
	logP := vec.LogSumExp(m.r)
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
func (m *refMixture) InnerLoss(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
func (m *refMixture) InnerGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
func (m *refMixture) products(hv, cross, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
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
func (m *refMixture) OuterGrad(dstX, dstLambda, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
func (m *refMixture) Accuracy(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
