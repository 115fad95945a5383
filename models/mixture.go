package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
)

// LabelWeights returns PDBO-DA (paper Sec. 6.1 and App. D): the
// hyperparameters λ ∈ R^C set a loss weight per label,
//
//	w_c(λ) = C·softmax(λ)_c ∈ [0, C],  w = 1 at λ = 0,
//
// and the costs on a batch b of n rows are
//
//	f(x, λ) = (1/n) Σ_b w_{y_b}(λ) ℓ_b(x) + (L2/2)‖x‖²,
//	F(x, λ) = (1/n) Σ_b ℓ_b(x) + (outerL2/2)‖λ‖²,
//
// with ℓ_b the cross-entropy of m on row b and L2 m's own rate. The model's
// regularizer is not weighted, and F has none in x: following App. D, F is
// the plain mean cross-entropy plus the L2 of λ, so ∂ₓF is the gradient of
// the unweighted mean cross-entropy alone and ∂_λF = outerL2·λ.
//
// The products are those of the mixture with K = 1 (see Ensemble):
//
//	(∂_λ∇ₓf)ᵀu = Σ_c (∂w_c/∂λ)ᵀ S_c,  S_c = (1/n) Σ_{b: y_b = c} ⟨∇ₓℓ_b, u⟩,
//	∂w_c/∂λ_j = C s_c (δ_cj − s_j),   s = softmax(λ).
//
// LabelWeights keeps its own clone of m. It panics if outerL2 is negative or
// not finite.
func LabelWeights(m Classifier, outerL2 float64) Bilevel {
	checkL2("LabelWeights: outerL2", outerL2)
	return newMixture([]Classifier{m}, false, true, 0, outerL2)
}

// Ensemble returns PDBO-MTL (paper Sec. 6.1 and App. D, after FedEM): x is
// the concatenation [x_1; …; x_K] of K base classifiers with the same
// features and classes, λ ∈ R^K gives the mixture weights π = softmax(λ), and
// the prediction is
//
//	P(y | a) = Σ_k π_k p_k(y | a),  p_k = softmax(z_k(x_k; a)).
//
// With ℓ_b = −log P(y_b | a_b), the costs on a batch of n rows are
//
//	f(x, λ) = (1/n) Σ_b ℓ_b + Σ_k (L2_k/2)‖x_k‖²,
//	F(x, λ) = (1/n) Σ_b ℓ_b + (outerL2/2)‖λ‖²,
//
// (F is unregularized in x). Writing r_bk = π_k p_k(y_b)/P(y_b) for the
// posterior responsibility of model k for row b,
//
//	∂ℓ_b/∂z_k = r_bk (p_k − e_y),  ∂ℓ_b/∂λ_m = π_m − r_bm,
//
// and along u = [u_1; …; u_K], with v_k = (∂z_k/∂x_k)u_k and
// s_k = v_k,y − p_kᵀv_k (the derivative of log p_k(y)) and s̄ = Σ_k r_k s_k
// (that of log P, so ⟨∇ₓℓ_b, u⟩ = −s̄):
//
//	R{r_k} = r_k (s_k − s̄),  R{p_k} = p_k ⊙ v_k − p_k (p_kᵀv_k),
//	∂r_k/∂λ_m = r_k (δ_km − r_m),
//	(∂_λ∇ₓf)ᵀu = −(1/n) Σ_b r_b ⊙ (s_b − s̄_b).
//
// The Hessian-vector product backpropagates R{∂ℓ/∂z_k} through each base
// model, plus the curvature of the logits themselves for an MLP.
// Accuracy takes the arg-max of P. With K = 1 the problem is the base
// model's (π = 1 whatever λ).
//
// Ensemble keeps its own clones of the bases, so one model may be passed K
// times. It panics if bases is empty, the bases disagree in features or
// classes, or outerL2 is negative or not finite.
func Ensemble(bases []Classifier, outerL2 float64) Bilevel {
	checkL2("Ensemble: outerL2", outerL2)
	return newMixture(bases, true, false, outerL2, 0)
}

// MTLDA returns PDBO-MTL&DA (paper Sec. 6.1 and App. D): the ensemble of
// Ensemble with the label weights of LabelWeights on its inner loss,
//
//	λ = [λ^K; λ^C] ∈ R^{K+C},  π = softmax(λ^K),  w = C·softmax(λ^C),
//	f(x, λ) = (1/n) Σ_b w_{y_b} ℓ_b + Σ_k (L2_k/2)‖x_k‖²,
//	F(x, λ) = (1/n) Σ_b ℓ_b + (outerL2Ensemble/2)‖λ^K‖² + (outerL2Labels/2)‖λ^C‖²,
//
// with ℓ_b the mixture cross-entropy of Ensemble; App. D's Table 2 uses
// different rates for the two blocks (0.01 and 0.0005). The products combine
// those of Ensemble (weighted by w_{y_b}) and LabelWeights.
//
// MTLDA keeps its own clones of the bases and panics on the inputs Ensemble
// panics on.
func MTLDA(bases []Classifier, outerL2Ensemble, outerL2Labels float64) Bilevel {
	checkL2("MTLDA: outerL2Ensemble", outerL2Ensemble)
	checkL2("MTLDA: outerL2Labels", outerL2Labels)
	return newMixture(bases, true, true, outerL2Ensemble, outerL2Labels)
}

// mixture implements LabelWeights, Ensemble and MTLDA: a mixture of K
// classifiers with optional ensemble weights λ^K and optional label weights
// λ^C, in that order in λ. Without ensemble weights K = 1 and π = [1];
// without label weights w = 1. The notation is that of Ensemble's comment.
type mixture struct {
	bases             []Classifier
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

	lin mixtureLinearized // what Linearize returns, reused
}

var _ Bilevel = (*mixture)(nil)

func newMixture(bases []Classifier, ensemble, labels bool, muK, muC float64) *mixture {
	if len(bases) == 0 {
		panic("models: mixture of no base models")
	}
	K := len(bases)
	D, C := bases[0].shape()
	m := &mixture{
		bases: make([]Classifier, K), off: make([]int, K+1),
		features: D, classes: C,
		ensemble: ensemble, labels: labels, muK: muK, muC: muC,
		logPi: make([]float64, K), pi: make([]float64, K),
		sLab: make([]float64, C), w: make([]float64, C),
		logp: make([]float64, K), r: make([]float64, K), s: make([]float64, K),
		mix: make([]float64, C), byClass: make([]float64, C),
	}
	for k, b := range bases {
		if dk, ck := b.shape(); dk != D || ck != C {
			panic(fmt.Sprintf("models: base model %d has features=%d, classes=%d; base 0 has features=%d, classes=%d",
				k, dk, ck, D, C))
		}
		m.bases[k] = b.Clone().(Classifier)
		m.off[k+1] = m.off[k] + b.Dim()
	}
	for _, buf := range []*[][]float64{&m.z, &m.q, &m.v, &m.g, &m.rg} {
		*buf = make([][]float64, K)
		for k := range *buf {
			(*buf)[k] = make([]float64, C)
		}
	}
	m.logPi[0], m.pi[0] = 0, 1 // K = 1 without ensemble weights
	for c := range m.w {
		m.w[c] = 1
	}
	return m
}

// nK and nC are the lengths of the blocks λ^K and λ^C (0 when absent).
func (m *mixture) nK() int {
	if m.ensemble {
		return len(m.bases)
	}
	return 0
}

func (m *mixture) nC() int {
	if m.labels {
		return m.classes
	}
	return 0
}

func (m *mixture) DimX() int      { return m.off[len(m.bases)] }
func (m *mixture) DimLambda() int { return m.nK() + m.nC() }

// xk returns the block of base k in a vector of length DimX.
func (m *mixture) xk(x []float64, k int) []float64 { return x[m.off[k]:m.off[k+1]] }

// Init initializes each base model's block in turn from r.
func (m *mixture) Init(dst []float64, r *rand.Rand) {
	checkLen("dst", dst, m.DimX())
	for k, b := range m.bases {
		b.Init(m.xk(dst, k), r)
	}
}

func (m *mixture) Clone() Bilevel {
	return newMixture(m.bases, m.ensemble, m.labels, m.muK, m.muC)
}

// start checks the arguments every method shares, sets the λ-dependent
// weights and returns the batch size.
func (m *mixture) start(x, lambda []float64, d *Dataset, idx []int) int {
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

// logSoftmax writes z − lse(z) into dst.
func logSoftmax(dst, z []float64) {
	lse := logSumExp(z)
	for i, v := range z {
		dst[i] = v - lse
	}
}

// row runs the forward pass of every base on features a with label y, fills
// z, q, logp and r, and returns ℓ = −log P(y | a).
func (m *mixture) row(x, a []float64, y int) float64 {
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
func (m *mixture) rowR(x, a, u []float64, y int) float64 {
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
func (m *mixture) backprop(dst, x, a []float64, y int, scale float64) {
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
func (m *mixture) regularize(dst, x, v []float64) float64 {
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
func (m *mixture) InnerLoss(x, lambda []float64, d *Dataset, idx []int) float64 {
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
func (m *mixture) InnerGrad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {
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

// InnerHVP writes (∂ₓ∇ₓf)·u into dst: per row and base,
// rowVJPR with g_k = (w/n) r_k (q_k − e_y) and
// R{g_k} = (w/n) [r_k (s_k − s̄)(q_k − e_y) + r_k R{q_k}].
func (m *mixture) InnerHVP(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	checkLen("dst", dst, m.DimX())
	m.products(dst, nil, x, lambda, d, idx, u, nil)
}

// InnerCross writes (∂_λ∇ₓf)ᵀu into dst: the λ^K block
// −(1/n) Σ_b w_{y_b} r_b ⊙ (s_b − s̄_b) and the λ^C block
// Σ_c (∂w_c/∂λ^C)ᵀ S_c with S_c = −(1/n) Σ_{b: y_b = c} s̄_b.
func (m *mixture) InnerCross(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	checkLen("dst", dst, m.DimLambda())
	m.products(nil, dst, x, lambda, d, idx, u, nil)
}

// products writes InnerHVP into hv and InnerCross into cross (a nil
// destination is skipped) from one forward and one R-pass per row. With a
// cache, the forward pass of row k is read from (or, on the cache's first
// use, written to) the cache instead of being recomputed.
func (m *mixture) products(hv, cross, x, lambda []float64, d *Dataset, idx []int, u []float64, c *forwardCache) {
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
		switch {
		case c == nil:
			m.row(x, a, y)
		case c.filled:
			c.load(m, k)
		default:
			m.row(x, a, y)
			c.store(m, k)
		}
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
	if c != nil {
		c.filled = true
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
func (m *mixture) OuterGrad(dstX, dstLambda, x, lambda []float64, d *Dataset, idx []int) float64 {
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
func (m *mixture) Accuracy(x, lambda []float64, d *Dataset, idx []int) float64 {
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
