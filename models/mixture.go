package models

import (
	"fmt"
	"hgpsim/datasets"
	"hgpsim/internal/vec"
	"math"
	"math/rand/v2"
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
func LabelWeights[F Float](m Classifier[F], outerL2 float64) Bilevel[F] {
	checkL2("LabelWeights: outerL2", outerL2)
	return newMixture([]Classifier[F]{m}, false, true, 0, outerL2)
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
func Ensemble[F Float](bases []Classifier[F], outerL2 float64) Bilevel[F] {
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
func MTLDA[F Float](bases []Classifier[F], outerL2Ensemble, outerL2Labels float64) Bilevel[F] {
	checkL2("MTLDA: outerL2Ensemble", outerL2Ensemble)
	checkL2("MTLDA: outerL2Labels", outerL2Labels)
	return newMixture(bases, true, true, outerL2Ensemble, outerL2Labels)
}

// mixture implements LabelWeights, Ensemble and MTLDA: a mixture of K
// classifiers with optional ensemble weights λ^K and optional label weights
// λ^C, in that order in λ. Without ensemble weights K = 1 and π = [1];
// without label weights w = 1. The notation is that of Ensemble's comment.
type mixture[F Float] struct {
	bases             []Classifier[F]
	off               []int // x_k = x[off[k]:off[k+1]]
	features, classes int
	ensemble, labels  bool    // which blocks λ has
	muK, muC          float64 // outer L2 rates of λ^K and λ^C

	// Set from λ by setLambda.
	logPi, pi []float64 // K: log π and π
	sLab, w   []float64 // C: softmax(λ^C) and the label weights C·sLab

	// Per-chunk scratch, for the nb rows of the chunk being processed.
	a              []F       // the rows (nb×D), when gathered
	y              []int     // nb labels
	z, q, v, g, rg [][]F     // K, each nb×C: logits, probabilities, R{z}, ∂ℓ/∂z, R{∂ℓ/∂z}
	logp, r, s     []float64 // nb×K: log p_k(y), responsibilities, R{log p_k}
	ell, sBar      []float64 // nb: ℓ_b and s̄_b
	mix, byClass   []float64 // C: mixture probabilities (Accuracy), S_c (InnerCross)

	lin mixtureLinearized[F] // what Linearize returns, reused

	// Which rows m.a holds decoded, when they are a whole-range chunk of a
	// coded Dataset (nil codes: none): a client's full batch is the same
	// single chunk call after call, and decoding it again each time was a
	// tenth of a gradient. A Dataset's codes do not change once built.
	aCodes       *uint8
	aLevels      *datasets.Levels
	aLo, aHi, aD int
}

var (
	_ Bilevel[float64] = (*mixture[float64])(nil)
	_ Bilevel[float32] = (*mixture[float32])(nil)
)

func newMixture[F Float](bases []Classifier[F], ensemble, labels bool, muK, muC float64) *mixture[F] {
	if len(bases) == 0 {
		panic("models: mixture of no base models")
	}
	K := len(bases)
	D, C := bases[0].shape()
	m := &mixture[F]{
		bases: make([]Classifier[F], K), off: make([]int, K+1),
		features: D, classes: C,
		ensemble: ensemble, labels: labels, muK: muK, muC: muC,
		logPi: make([]float64, K), pi: make([]float64, K),
		sLab: make([]float64, C), w: make([]float64, C),
		z: make([][]F, K), q: make([][]F, K), v: make([][]F, K),
		g: make([][]F, K), rg: make([][]F, K),
		mix: make([]float64, C), byClass: make([]float64, C),
	}
	for k, b := range bases {
		if dk, ck := b.shape(); dk != D || ck != C {
			panic(fmt.Sprintf("models: base model %d has features=%d, classes=%d; base 0 has features=%d, classes=%d",
				k, dk, ck, D, C))
		}
		m.bases[k] = b.Clone().(Classifier[F])
		m.off[k+1] = m.off[k] + b.Dim()
	}
	m.logPi[0], m.pi[0] = 0, 1 // K = 1 without ensemble weights
	for c := range m.w {
		m.w[c] = 1
	}
	return m
}

// nK and nC are the lengths of the blocks λ^K and λ^C (0 when absent).
func (m *mixture[F]) nK() int {
	if m.ensemble {
		return len(m.bases)
	}
	return 0
}

func (m *mixture[F]) nC() int {
	if m.labels {
		return m.classes
	}
	return 0
}

func (m *mixture[F]) DimX() int      { return m.off[len(m.bases)] }
func (m *mixture[F]) DimLambda() int { return m.nK() + m.nC() }

// xk returns the block of base k in a vector of length DimX.
func (m *mixture[F]) xk(x []F, k int) []F { return x[m.off[k]:m.off[k+1]] }

// Init initializes each base model's block in turn from r.
func (m *mixture[F]) Init(dst []F, r *rand.Rand) {
	checkLen("dst", dst, m.DimX())
	for k, b := range m.bases {
		b.Init(m.xk(dst, k), r)
	}
}

func (m *mixture[F]) Clone() Bilevel[F] {
	return newMixture(m.bases, m.ensemble, m.labels, m.muK, m.muC)
}

// start checks the arguments every method shares, sets the λ-dependent
// weights and returns the batch size.
func (m *mixture[F]) start(x []F, lambda []float64, d *datasets.Dataset, idx []int) int {
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
	lse := vec.LogSumExp(z)
	for i, v := range z {
		dst[i] = v - lse
	}
}

// chunk prepares the batch rows lo…hi−1: it sizes the scratch, checks
// the rows' labels into m.y and returns the rows' features (nb×D) and nb.
func (m *mixture[F]) chunk(d *datasets.Dataset, idx []int, lo, hi int) ([]F, int) {
	nb := hi - lo
	K, C := len(m.bases), m.classes
	for k := range K {
		for _, buf := range []*[]F{&m.z[k], &m.q[k], &m.v[k], &m.g[k], &m.rg[k]} {
			*buf = resize(*buf, nb*C)
		}
	}
	m.logp = resize(m.logp, nb*K)
	m.r = resize(m.r, nb*K)
	m.s = resize(m.s, nb*K)
	m.ell = resize(m.ell, nb)
	m.sBar = resize(m.sBar, nb)
	if cap(m.y) < nb {
		m.y = make([]int, nb)
	}
	m.y = m.y[:nb]
	var a []F
	switch {
	case idx != nil || !d.Coded() || len(d.Codes) == 0:
		m.aCodes = nil
		a = batchRows(&m.a, d, idx, lo, hi)
	case m.aCodes == &d.Codes[0] && m.aLevels == d.Levels && m.aLo == lo && m.aHi == hi && m.aD == d.D && len(m.a) == nb*d.D:
		a = m.a
	default:
		a = batchRows(&m.a, d, idx, lo, hi)
		m.aCodes, m.aLevels, m.aLo, m.aHi, m.aD = &d.Codes[0], d.Levels, lo, hi, d.D
	}
	for b := range nb {
		m.y[b] = label(d, rowIndex(d, idx, lo+b), C)
	}
	return a, nb
}

// rowOf returns row b of an nb×C buffer.
func rowOf[F Float](buf []F, b, C int) []F { return buf[b*C : (b+1)*C] }

// forward runs the forward pass of every base on the chunk's rows A (nb
// of them, labels m.y), fills z, q, logp and r, and writes ℓ_b =
// −log P(y_b | a_b) into m.ell.
func (m *mixture[F]) forward(x, A []F, nb int) {
	K, C := len(m.bases), m.classes
	for k, b := range m.bases {
		b.batchLogits(m.z[k], m.xk(x, k), A, nb)
	}
	for b, y := range m.y {
		logp, r := m.logp[b*K:(b+1)*K], m.r[b*K:(b+1)*K]
		for k := range K {
			z, q := rowOf(m.z[k], b, C), rowOf(m.q[k], b, C)
			lse := logSumExp(z)
			for j, zj := range z {
				q[j] = F(math.Exp(float64(zj) - lse))
			}
			logp[k] = float64(z[y]) - lse
		}
		if K == 1 {
			r[0] = 1
			m.ell[b] = -logp[0]
			continue
		}
		for k := range r {
			r[k] = m.logPi[k] + logp[k]
		}
		logP := vec.LogSumExp(r)
		for k, l := range r {
			r[k] = math.Exp(l - logP)
		}
		m.ell[b] = -logP
	}
}

// forwardR runs the forward R-pass along u after forward: it fills v and s
// and writes s̄_b = Σ_k r_bk s_bk into m.sBar.
func (m *mixture[F]) forwardR(x, u []F) {
	K, C := len(m.bases), m.classes
	for k, b := range m.bases {
		b.batchJVP(m.v[k], m.xk(x, k), m.xk(u, k))
	}
	for b, y := range m.y {
		var sBar float64
		s, r := m.s[b*K:(b+1)*K], m.r[b*K:(b+1)*K]
		for k := range K {
			v := rowOf(m.v[k], b, C)
			s[k] = float64(v[y]) - dotF(rowOf(m.q[k], b, C), v)
			sBar += r[k] * s[k]
		}
		m.sBar[b] = sBar
	}
}

// backprop adds Σ_b scale_b·Σ_k J_kᵀ r_bk (q_bk − e_y) to dst, with
// scale_b = inv·w_{y_b} when weighted and inv otherwise.
func (m *mixture[F]) backprop(dst, x []F, inv float64, weighted bool) {
	K, C := len(m.bases), m.classes
	for k, base := range m.bases {
		for b, y := range m.y {
			scale := inv
			if weighted {
				scale = inv * m.w[y]
			}
			g, q := rowOf(m.g[k], b, C), rowOf(m.q[k], b, C)
			c := scale * m.r[b*K+k]
			for j, qj := range q {
				g[j] = F(c * float64(qj))
			}
			g[y] -= F(c)
		}
		base.batchVJP(m.xk(dst, k), m.xk(x, k), m.g[k])
	}
}

// regularize returns Σ_k (L2_k/2)‖x_k‖² and, when dst is not nil, adds
// L2_k·v_k to dst's blocks.
func (m *mixture[F]) regularize(dst, x, v []F) float64 {
	var reg float64
	for k, b := range m.bases {
		l2 := b.l2Rate()
		reg += 0.5 * l2 * sumSquares(m.xk(x, k))
		if dst != nil {
			addScaled(m.xk(dst, k), l2, m.xk(v, k))
		}
	}
	return reg
}

// addRegularizer adds L2_k·v_k to dst's blocks: regularize without the
// regularizer's value, which the products do not need.
func (m *mixture[F]) addRegularizer(dst, v []F) {
	for k, b := range m.bases {
		addScaled(m.xk(dst, k), b.l2Rate(), m.xk(v, k))
	}
}
