package models

import (
	"hgpsim/datasets"

	"gonum.org/v1/gonum/floats"
)

// The mixture's Bilevel methods: costs, gradients and the exact products,
// on the forward and backward passes of mixture.go.

// InnerLoss returns f(x, λ).
func (m *mixture[F]) InnerLoss(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.hold()
	defer m.unhold()
	n := m.start(x, lambda, d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		a, nb := m.chunk(d, idx, lo, hi)
		m.forward(x, a, nb)
		for b, y := range m.y {
			loss += m.w[y] * m.ell[b]
		}
	}
	return loss/float64(n) + m.regularize(nil, x, nil)
}

// InnerGrad writes ∇ₓf into dst and returns f, with the value InnerLoss
// returns.
func (m *mixture[F]) InnerGrad(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.hold()
	defer m.unhold()
	n := m.start(x, lambda, d, idx)
	checkLen("dst", dst, m.DimX())
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		a, nb := m.chunk(d, idx, lo, hi)
		m.forward(x, a, nb)
		for b, y := range m.y {
			loss += m.w[y] * m.ell[b]
		}
		m.backprop(dst, x, inv, true)
	}
	return loss/float64(n) + m.regularize(dst, x, x)
}

// InnerHVP writes (∂ₓ∇ₓf)·u into dst: per base, batchVJPR of the rows'
// g_k = (w/n) r_k (q_k − e_y) and
// R{g_k} = (w/n) [r_k (s_k − s̄)(q_k − e_y) + r_k R{q_k}].
func (m *mixture[F]) InnerHVP(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F) {
	m.hold()
	defer m.unhold()
	checkLen("dst", dst, m.DimX())
	m.products(dst, nil, x, lambda, d, idx, u, nil)
}

// InnerCross writes (∂_λ∇ₓf)ᵀu into dst: the λ^K block
// −(1/n) Σ_b w_{y_b} r_b ⊙ (s_b − s̄_b) and the λ^C block
// Σ_c (∂w_c/∂λ^C)ᵀ S_c with S_c = −(1/n) Σ_{b: y_b = c} s̄_b.
func (m *mixture[F]) InnerCross(dst []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F) {
	m.hold()
	defer m.unhold()
	checkLen("dst", dst, m.DimLambda())
	m.products(nil, dst, x, lambda, d, idx, u, nil)
}

// products writes InnerHVP into hv and InnerCross into cross (a nil
// destination is skipped) from one forward and one R-pass per row. With a
// cache, the forward pass of the batch is read from (or, on the cache's
// first use, written to) the cache instead of being recomputed.
func (m *mixture[F]) products(hv []F, cross []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F, c *forwardCache[F]) {
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
	K, C := len(m.bases), m.classes
	for lo, hi := range chunks(n) {
		a, nb := m.chunk(d, idx, lo, hi)
		switch {
		case c == nil:
			m.forward(x, a, nb)
		case c.filled:
			c.load(m, lo, nb)
			for _, b := range m.bases {
				b.(statelessRows[F]).bindRows(a, nb)
			}
		default:
			m.forward(x, a, nb)
			c.store(m, lo, nb)
		}
		m.forwardR(x, u)
		if hv != nil {
			for kb, base := range m.bases {
				for b, y := range m.y {
					q, v := rowOf(m.q[kb], b, C), rowOf(m.v[kb], b, C)
					g, rg := rowOf(m.g[kb], b, C), rowOf(m.rg[kb], b, C)
					sk, sBar := m.s[b*K+kb], m.sBar[b]
					c := inv * m.w[y] * m.r[b*K+kb]
					ds := sk - sBar
					qv := float64(v[y]) - sk // q_kᵀv_k
					for j, q := range q {
						qj := float64(q)
						e := qj
						if j == y {
							e--
						}
						g[j] = F(c * e)
						rg[j] = F(c * (ds*e + qj*(float64(v[j])-qv)))
					}
				}
				base.batchVJPR(m.xk(hv, kb), m.xk(x, kb), m.xk(u, kb), m.g[kb], m.rg[kb])
			}
		}
		if cross != nil {
			for b, y := range m.y {
				sBar := m.sBar[b]
				if m.ensemble {
					c := inv * m.w[y]
					for kb, rk := range m.r[b*K : (b+1)*K] {
						cross[kb] -= c * rk * (m.s[b*K+kb] - sBar)
					}
				}
				m.byClass[y] -= inv * sBar
			}
		}
	}
	if c != nil {
		c.filled = true
	}
	if hv != nil {
		m.addRegularizer(hv, u)
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
func (m *mixture[F]) OuterGrad(dstX []F, dstLambda []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.hold()
	defer m.unhold()
	n := m.start(x, lambda, d, idx)
	checkLen("dstX", dstX, m.DimX())
	checkLen("dstLambda", dstLambda, m.DimLambda())
	inv := 1 / float64(n)
	clear(dstX)
	clear(dstLambda)
	K := len(m.bases)
	var loss float64
	for lo, hi := range chunks(n) {
		a, nb := m.chunk(d, idx, lo, hi)
		m.forward(x, a, nb)
		for b := range nb {
			loss += m.ell[b]
			if m.ensemble {
				for kb, rk := range m.r[b*K : (b+1)*K] {
					dstLambda[kb] += inv * (m.pi[kb] - rk)
				}
			}
		}
		m.backprop(dstX, x, inv, false)
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
func (m *mixture[F]) Accuracy(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.hold()
	defer m.unhold()
	n := m.start(x, lambda, d, idx)
	C := m.classes
	correct := 0
	for lo, hi := range chunks(n) {
		a, nb := m.chunk(d, idx, lo, hi)
		m.forward(x, a, nb)
		for b, y := range m.y {
			pred := 0
			if len(m.bases) == 1 {
				pred = argmax(rowOf(m.z[0], b, C))
			} else {
				clear(m.mix)
				for kb, q := range m.q {
					addScaledTo(m.mix, m.pi[kb], rowOf(q, b, C))
				}
				pred = argmax(m.mix)
			}
			if pred == y {
				correct++
			}
		}
	}
	return float64(correct) / float64(n)
}
