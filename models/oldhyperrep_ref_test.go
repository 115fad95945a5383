package models

// The hyper-representation as two hand-written types, HyperRep on the MLP
// and CNNHyperRep on an nn net, as they were before they became one type,
// kept for one commit as the reference that oldhyperrep_test.go compares
// the unified type with bit for bit.

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
	"hgpsim/models/nn"
)

// oldHyperRep is the federated hyper-representation problem of FedNest
// (Tarzanagh et al. 2022) and FBO-AggITD (Sec. 5, App. A.2): a
// one-hidden-layer perceptron whose hidden layer is the OUTER variable and
// whose output layer is the INNER one. In this package's names (Bilevel):
//
//	λ = (W₁, b₁)  (Hidden×Features + Hidden; 157,000 for 784→200),
//	x = (W₂, b₂)  (Classes×Hidden + Classes; 2,010 for 200→10),
//	h = σ(W₁a + b₁),  z = W₂h + b₂,  σ = ReLU (default) or tanh,
//	g(x, λ) = mean_b CE(z_b, y_b) + (μ/2)‖x‖²   (InnerLoss, on train data),
//	f(x, λ) = mean_b CE(z_b, y_b)               (OuterGrad, on validation data).
//
// μ > 0 makes g strongly convex in x (the papers' Assumption 1; g is a
// softmax regression on the features h). f has no regularizer. For fixed λ
// the features h of a row do not change, so oldHyperRep caches them per
// dataset and row until λ changes (compared by value): the lower level of
// the federated methods then costs C·H per row instead of H·D.
//
// Every product is exact: ∇ₓg, ∇²ₓₓg·u (the softmax Hessian on the
// features), the cross product (∂_λ∇ₓg)ᵀu (backpropagation of ⟨∇ₓg, u⟩ into
// the hidden layer) and ∂_λf. ReLU's second derivative is 0 almost
// everywhere, which is what the products use (the papers' baseline code
// does the same through autograd).
//
// Two choices of the FedNest authors' released code, not stated in either
// paper, are options (HyperRepOptions; both off by default): dropout on the
// hidden features in the training products, and the penalty μ(‖W₂‖ + ‖b₂‖)
// (a norm per parameter tensor, not squared) in place of (μ/2)‖x‖².
//
// A *oldHyperRep holds scratch and the cache: one goroutine per value, Clone
// for others. Datasets must stay unchanged once used (they are read-only by
// contract), since the cache is keyed by their address.
type oldHyperRep struct {
	features, hidden, classes int
	mu                        float64
	relu                      bool
	opt                       HyperRepOptions

	// Dropout mask of the products (masking false: none, as in evaluation).
	masking bool
	key     uint64

	cache featureCaches // of the hidden features h (Hidden floats a row)

	// Per-chunk scratch (nb rows).
	miss       []int     // rows whose features are computed in this chunk
	a          []float64 // scratch for gathered inputs
	rows       []float64 // nb×Features: the rows' inputs a_b (in m.a or a view of the data)
	hb         []float64 // nb×Hidden: their hidden features h_b
	z, p, v, g []float64 // nb×Classes: logits, probabilities, R{z}, a gradient in z
	pv, lse    []float64 // nb: p_bᵀv_b, lse(z_b)
	g2         []float64 // nb×2·Classes: a second gradient in z, or two interleaved
	gh         []float64 // nb×Hidden: ∂/∂h, then ∂/∂s
	xu         []float64 // 2·Classes×Hidden: rows of W₂ and U₂, interleaved
	keep, hu   []float64 // nb×Hidden: dropout factors (0 or 1/(1−p)) and the unmasked features
}

// NewHyperRep returns the hyper-representation model. It panics on sizes
// below 1 (classes below 2) or a negative or non-finite μ.
func newOldHyperRep(features, hidden, classes int, mu float64, relu bool) *oldHyperRep {
	if features < 1 || hidden < 1 || classes < 2 {
		panic(fmt.Sprintf("models: newOldHyperRep(features=%d, hidden=%d, classes=%d): need features >= 1, hidden >= 1, classes >= 2",
			features, hidden, classes))
	}
	checkL2("NewHyperRep: mu", mu)
	return &oldHyperRep{features: features, hidden: hidden, classes: classes, mu: mu, relu: relu}
}

// NewHyperRepWith returns the hyper-representation model with options. It
// panics where NewHyperRep does and on a dropout rate outside [0, 1).
func newOldHyperRepWith(features, hidden, classes int, mu float64, relu bool, o HyperRepOptions) *oldHyperRep {
	if !(o.Dropout >= 0 && o.Dropout < 1) {
		panic(fmt.Sprintf("models: NewHyperRepWith: dropout %v not in [0, 1)", o.Dropout))
	}
	m := newOldHyperRep(features, hidden, classes, mu, relu)
	m.opt = o
	return m
}

// DropoutRate implements Dropout.
func (m *oldHyperRep) DropoutRate() float64 { return m.opt.Dropout }

// SetMask implements Dropout. It is a no-op without a dropout rate.
func (m *oldHyperRep) SetMask(key uint64, on bool) {
	m.key, m.masking = key, on && m.opt.Dropout > 0
}

// keepFactor is unit q's dropout factor at batch position k under the
// current key: 0 or 1/(1−p). The hash is splitmix64's finalizer over the
// three words, so the mask does not depend on how a batch is chunked.
func (m *oldHyperRep) keepFactor(k, q int) float64 {
	z := m.key ^ (uint64(k)+1)*0x9e3779b97f4a7c15 ^ (uint64(q)+1)*0xc2b2ae3d27d4eb4f
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	if float64(z>>11)/(1<<53) < m.opt.Dropout {
		return 0
	}
	return 1 / (1 - m.opt.Dropout)
}

// DimX implements Bilevel: the output layer.
func (m *oldHyperRep) DimX() int { return m.classes*m.hidden + m.classes }

// DimLambda implements Bilevel: the hidden layer.
func (m *oldHyperRep) DimLambda() int { return m.hidden*m.features + m.hidden }

// Clone implements Bilevel.
func (m *oldHyperRep) Clone() Bilevel {
	return newOldHyperRepWith(m.features, m.hidden, m.classes, m.mu, m.relu, m.opt)
}

// Init implements Bilevel: W₂ ~ N(0, 1/Hidden), b₂ = 0.
func (m *oldHyperRep) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimX())
	clear(dst)
	s := 1 / math.Sqrt(float64(m.hidden))
	for i := range dst[:m.classes*m.hidden] {
		dst[i] = s * r.NormFloat64()
	}
}

// InitLambda writes initial outer parameters: W₁ ~ N(0, g/Features) with
// g = 2 for ReLU (He) and 1 for tanh, b₁ = 0. (λ = 0 would make every
// feature 0 and the problem degenerate.)
func (m *oldHyperRep) InitLambda(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimLambda())
	clear(dst)
	g := 1.0
	if m.relu {
		g = 2
	}
	s := math.Sqrt(g / float64(m.features))
	for i := range dst[:m.hidden*m.features] {
		dst[i] = s * r.NormFloat64()
	}
}

var (
	_ Bilevel           = (*oldHyperRep)(nil)
	_ LambdaInitializer = (*oldHyperRep)(nil)
)

func (m *oldHyperRep) check(x, lambda []float64, d *datasets.Dataset) {
	checkArgs(m, x, lambda, d, m.features, m.classes)
}

// chunk prepares the batch rows lo…hi−1 (positions in idx) and returns
// nb = hi − lo. It computes the hidden features of the rows the cache
// lacks — one matrix product for all of them, each h summed as the row
// form's vec.DotRows summed it — and leaves the rows' features h_b in the
// rows of m.hb and their labels checked. With rows, it also sets m.rows to
// the rows' inputs a_b, for the products in λ.
func (m *oldHyperRep) chunk(c *featureCache, lambda []float64, d *datasets.Dataset, idx []int, lo, hi int, rows bool) int {
	H, D, C := m.hidden, m.features, m.classes
	nb := hi - lo
	for b := range nb {
		label(d, rowIndex(d, idx, lo+b), C)
	}
	m.miss = m.cache.misses(m.miss[:0], c, d, idx, lo, hi)
	if len(m.miss) > 0 {
		nm := len(m.miss)
		m.a = resize(m.a, nm*D)
		m.hb = resize(m.hb, nm*H)
		d.Gather(m.a, m.miss)
		gemm.DotNT(nm, H, D, m.a, D, lambda, D, m.hb, H) // W₁a
		b1 := lambda[H*D:]
		for k, i := range m.miss {
			h, out := m.hb[k*H:(k+1)*H], c.h[i*H:(i+1)*H]
			for q := range H {
				s := h[q] + b1[q]
				if m.relu {
					out[q] = max(s, 0)
				} else {
					out[q] = math.Tanh(s)
				}
			}
		}
	}
	m.hb = resize(m.hb, nb*H)
	for b := range nb {
		i := rowIndex(d, idx, lo+b)
		copy(m.hb[b*H:(b+1)*H], c.h[i*H:(i+1)*H])
	}
	if m.masking {
		m.keep = resize(m.keep, nb*H)
		m.hu = resize(m.hu, nb*H)
		copy(m.hu, m.hb)
		for b := range nb {
			for q := range H {
				f := m.keepFactor(lo+b, q)
				m.keep[b*H+q] = f
				m.hb[b*H+q] *= f
			}
		}
	}
	if rows {
		m.rows = batchRows(&m.a, d, idx, lo, hi)
	}
	for _, buf := range []*[]float64{&m.z, &m.p, &m.v, &m.g} {
		*buf = resize(*buf, nb*C)
	}
	m.pv = resize(m.pv, nb)
	m.lse = resize(m.lse, nb)
	m.g2 = resize(m.g2, 2*nb*C)
	m.gh = resize(m.gh, nb*H)
	return nb
}

// dsigma returns σ'(s) from h = σ(s).
func (m *oldHyperRep) dsigma(h float64) float64 {
	if m.relu {
		if h > 0 {
			return 1
		}
		return 0
	}
	return 1 - h*h
}

// probs sets the rows of m.z to the logits W₂h_b + b₂ and those of m.p to
// softmax(z_b), for the nb rows of m.hb.
func (m *oldHyperRep) probs(x []float64, nb int) {
	H, C := m.hidden, m.classes
	gemm.DotNT(nb, C, H, m.hb, H, x, H, m.z, C)
	addToRows(m.z[:nb*C], x[C*H:])
	for b := range nb {
		z, p := m.z[b*C:(b+1)*C], m.p[b*C:(b+1)*C]
		lse := vec.LogSumExp(z)
		for j := range C {
			p[j] = math.Exp(z[j] - lse)
		}
		m.lse[b] = lse
	}
}

// crossEntropy returns the cross-entropy lse(z_b) − z_b,y of row b of the
// last probs.
func (m *oldHyperRep) crossEntropy(b, y int) float64 {
	return m.lse[b] - m.z[b*m.classes+y]
}

// InnerLoss implements Bilevel: g.
func (m *oldHyperRep) InnerLoss(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.probs(x, nb)
		for b := range nb {
			loss += m.crossEntropy(b, d.Y[rowIndex(d, idx, lo+b)])
		}
	}
	return loss/float64(n) + m.penalty(x)
}

// penalty is (μ/2)‖x‖², or μ(‖W₂‖ + ‖b₂‖) under NormPenalty.
func (m *oldHyperRep) penalty(x []float64) float64 {
	if !m.opt.NormPenalty {
		return 0.5 * m.mu * sumSquares(x)
	}
	ch := m.classes * m.hidden
	return m.mu * (math.Sqrt(sumSquares(x[:ch])) + math.Sqrt(sumSquares(x[ch:])))
}

// addPenaltyGrad adds the penalty's gradient: μx, or μw/‖w‖ per tensor w.
func (m *oldHyperRep) addPenaltyGrad(dst, x []float64) {
	if !m.opt.NormPenalty {
		floats.AddScaled(dst, m.mu, x)
		return
	}
	ch := m.classes * m.hidden
	for _, r := range [][2]int{{0, ch}, {ch, len(x)}} {
		w := x[r[0]:r[1]]
		if nw := math.Sqrt(sumSquares(w)); nw > 0 {
			floats.AddScaled(dst[r[0]:r[1]], m.mu/nw, w)
		}
	}
}

// addPenaltyHVP adds the penalty's Hessian times u: μu, or
// μ(u/‖w‖ − w(wᵀu)/‖w‖³) per tensor w (0 at w = 0).
func (m *oldHyperRep) addPenaltyHVP(dst, x, u []float64) {
	if !m.opt.NormPenalty {
		floats.AddScaled(dst, m.mu, u)
		return
	}
	ch := m.classes * m.hidden
	for _, r := range [][2]int{{0, ch}, {ch, len(x)}} {
		w, uw, dw := x[r[0]:r[1]], u[r[0]:r[1]], dst[r[0]:r[1]]
		nw := math.Sqrt(sumSquares(w))
		if nw == 0 {
			continue
		}
		floats.AddScaled(dw, m.mu/nw, uw)
		floats.AddScaled(dw, -m.mu*floats.Dot(w, uw)/(nw*nw*nw), w)
	}
}

// InnerGrad implements Bilevel: ∇ₓg = mean_b (p − e_y) ⊗ [h; 1] + μx (or
// the norm penalty's gradient).
func (m *oldHyperRep) InnerGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	loss := m.outputGrad(dst, x, lambda, d, idx)
	m.addPenaltyGrad(dst, x)
	return loss + m.penalty(x)
}

// outputGrad writes the gradient of the mean cross-entropy in x into dst
// and returns the mean cross-entropy.
func (m *oldHyperRep) outputGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	H, C := m.hidden, m.classes
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.probs(x, nb)
		for b := range nb {
			y := d.Y[rowIndex(d, idx, lo+b)]
			loss += m.crossEntropy(b, y)
			for j := range C {
				g := m.p[b*C+j]
				if j == y {
					g--
				}
				g *= inv
				m.g[b*C+j] = g
			}
		}
		gemm.AccTN(C, H, nb, m.g, C, m.hb, H, dst, H)
		accumulateRows(dst[C*H:], m.g[:nb*C])
	}
	return loss * inv
}

// rz sets the rows of m.v to U₂h_b + u_b₂ (R{z} along u) and writes p_bᵀv_b
// into m.pv[b].
func (m *oldHyperRep) rz(u []float64, nb int) {
	H, C := m.hidden, m.classes
	gemm.DotNT(nb, C, H, m.hb, H, u, H, m.v, C)
	addToRows(m.v[:nb*C], u[C*H:])
	for b := range nb {
		var s float64
		for j := range C {
			s += m.p[b*C+j] * m.v[b*C+j]
		}
		m.pv[b] = s
	}
}

// InnerHVP implements Bilevel: ∇²ₓₓg·u = mean_b R{p} ⊗ [h; 1] + μu (or the
// norm penalty's Hessian times u) with R{z} = U₂h + u_b₂ and R{p} = p ⊙ R{z}
// − p (pᵀR{z}).
func (m *oldHyperRep) InnerHVP(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	checkVec("u", u, m.DimX())
	H, C := m.hidden, m.classes
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.probs(x, nb)
		m.rz(u, nb)
		for b := range nb {
			s := m.pv[b]
			for j := range C {
				m.g[b*C+j] = inv * m.p[b*C+j] * (m.v[b*C+j] - s)
			}
		}
		gemm.AccTN(C, H, nb, m.g, C, m.hb, H, dst, H)
		accumulateRows(dst[C*H:], m.g[:nb*C])
	}
	m.addPenaltyHVP(dst, x, u)
}

// InnerCross implements Bilevel: the gradient in λ of ⟨∇ₓg, u⟩ =
// mean_b (p − e_y)ᵀv with v = U₂h + u_b₂. Through h,
//
//	∂/∂h = W₂ᵀR{p} + U₂ᵀ(p − e_y),  ∂/∂s = σ'(s) ⊙ ∂/∂h,
//	∂W₁ = (∂/∂s) aᵀ,  ∂b₁ = ∂/∂s.
//
// The row form added R{p}_j W₂_j and then (p − e_y)_j U₂_j for each j in
// turn; the product interleaves the pairs along k the same way.
func (m *oldHyperRep) InnerCross(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimLambda())
	checkVec("u", u, m.DimX())
	H, C, D := m.hidden, m.classes, m.features
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	m.interleave(x, u)
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, true)
		m.probs(x, nb)
		m.rz(u, nb)
		for b := range nb {
			y := d.Y[rowIndex(d, idx, lo+b)]
			s := m.pv[b]
			pg := m.g2[2*b*C : 2*(b+1)*C]
			for j := range C {
				p := m.p[b*C+j]
				g := p
				if j == y {
					g--
				}
				pg[2*j] = p * (m.v[b*C+j] - s) // R{p}_j
				pg[2*j+1] = g
			}
		}
		clear(m.gh)
		gemm.AccNN(nb, H, 2*C, m.g2, 2*C, m.xu, H, m.gh, H)
		m.backHidden(dst, dst[H*D:], nb, inv)
	}
}

// interleave fills m.xu with the rows W₂_0, U₂_0, W₂_1, U₂_1, … of x and u.
func (m *oldHyperRep) interleave(x, u []float64) {
	H, C := m.hidden, m.classes
	m.xu = resize(m.xu, 2*C*H)
	for j := range C {
		copy(m.xu[2*j*H:(2*j+1)*H], x[j*H:(j+1)*H])
		copy(m.xu[(2*j+1)*H:(2*j+2)*H], u[j*H:(j+1)*H])
	}
}

// backHidden adds Σ_b inv·(σ'(s_b) ⊙ g_h,b) a_bᵀ, with g_h,b the rows of
// m.gh, to W₁'s block of dst and the same vectors to db1.
//
// The row form skipped the units whose factor is 0 (half of them for
// ReLU); the product adds their ±0 products instead, which leaves every
// sum as it was — the sums start at +0 and so never become −0 — for the
// finite features every dataset has.
func (m *oldHyperRep) backHidden(dst, db1 []float64, nb int, inv float64) {
	D, H := m.features, m.hidden
	for b := range nb {
		h, gs := m.hb[b*H:(b+1)*H], m.gh[b*H:(b+1)*H]
		if m.masking {
			// h̃ = keep·σ(s): the factor is keep·σ'(s), σ' from the unmasked h.
			h = m.hu[b*H : (b+1)*H]
			for q, f := range m.keep[b*H : (b+1)*H] {
				gs[q] *= f
			}
		}
		for q := range H {
			gs[q] = inv * gs[q] * m.dsigma(h[q])
			if gs[q] != 0 {
				db1[q] += gs[q]
			}
		}
	}
	gemm.AccTN(H, D, nb, m.gh, H, m.rows, D, dst[:H*D], D)
}

// OuterGradTakesNil implements PartialOuter.
func (*oldHyperRep) OuterGradTakesNil() {}

// OuterGrad implements Bilevel: f = mean CE, ∂ₓf as InnerGrad without μ,
// ∂_λf by backpropagation into the hidden layer. dstX or dstLambda may be
// nil when that part is not wanted.
func (m *oldHyperRep) OuterGrad(dstX, dstLambda, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
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
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, dstLambda != nil)
		m.probs(x, nb)
		for b := range nb {
			y := d.Y[rowIndex(d, idx, lo+b)]
			loss += m.crossEntropy(b, y)
			for j := range C {
				g := m.p[b*C+j]
				if j == y {
					g--
				}
				m.g[b*C+j] = g
				m.g2[b*C+j] = inv * g
			}
		}
		if dstX != nil {
			gemm.AccTN(C, H, nb, m.g2, C, m.hb, H, dstX, H)
			accumulateRows(dstX[C*H:], m.g2[:nb*C])
		}
		if dstLambda != nil {
			clear(m.gh)
			gemm.AccNN(nb, H, C, m.g, C, x, H, m.gh, H)
			m.backHidden(dstLambda, dstLambda[H*D:], nb, inv)
		}
	}
	return loss * inv
}

// Accuracy implements Bilevel.
func (m *oldHyperRep) Accuracy(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.hidden)
	n := batchSize(d, idx)
	C := m.classes
	right := 0
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.probs(x, nb)
		right += hits(m.z, C, d, idx, lo, nb)
	}
	return float64(right) / float64(n)
}


// oldCNNHyperRep is the federated hyper-representation problem on a
// convolutional net of package nn, as FBO-AggITD's CIFAR-10 experiment
// (App. A.2) sets it on LeNet: the net's layer stack is cut before its last
// k parameterised layers, which must be dense,
//
//	body  a → h = B(a; λ)  (the convolutions and everything up to the cut),
//	tail  h → z = T(h; x)  (the last k dense layers and the activations
//	                        between them),
//	g(x, λ) = mean_b CE(z_b, y_b) + (μ/2)‖x‖²   (InnerLoss, on train data),
//	f(x, λ) = mean_b CE(z_b, y_b)               (OuterGrad, on validation data),
//
// so λ is the head of the net's PyTorch-ordered parameter vector and x its
// tail. With the paper's k = 2 on LeNet (… dense 120, ReLU, dense 84,
// ReLU, dense C), h is the 120 ReLU outputs, x = (W₈₄, b₈₄, W_C, b_C) and λ
// everything before.
//
// μ (the cnn's l2) > 0 makes g strongly convex in x only for k = 1 (a
// softmax regression on h); for k = 2 the lower level is a small
// non-convex net, as in the paper. For fixed λ the features h of a row do
// not change, so oldCNNHyperRep caches them per dataset and row until λ
// changes (compared by value), as oldHyperRep does: InnerLoss, InnerGrad,
// InnerHVP and Accuracy then run only the tail. InnerCross and OuterGrad's
// ∂_λf run the body forward and backward on their batch.
//
// Every product is exact (nn's forward-over-reverse passes):
//
//	∇ₓg         tail VJP of G = (p − e_y)/n, plus μx;
//	∇²ₓₓg·u     tail VJPR along u with R{G} = (p ⊙ R{z} − p pᵀR{z})/n, plus μu;
//	(∂_λ∇ₓg)ᵀu  the body's VJP of ∂/∂h ⟨∇ₓg, u⟩, which is the tail's
//	            R{∂/∂h} along u (nn.Net.VJPRInput);
//	∂_λf        the body's VJP of the tail's ∂f/∂h (nn.Net.VJPInput).
//
// A *oldCNNHyperRep holds the nets' workspaces and the cache: one goroutine
// per value, Clone for others. Datasets must stay unchanged once used
// (they are read-only by contract), since the cache is keyed by their
// address.
type oldCNNHyperRep struct {
	body, tail *nn.Net
	in         nn.Shape
	bodyLayers []nn.Spec
	tailLayers []nn.Spec
	features   int // D = in.Size()
	feat       int // F, the floats of h
	classes    int
	mu         float64

	cache featureCaches // of the features h (F floats a row)

	// Per-chunk scratch.
	miss        []int
	a           []float64 // gathered rows
	hm          []float64 // the misses' features
	hb          []float64 // nb×F: the chunk's features h_b
	gh          []float64 // nb×F: a gradient in h
	z, v, g, rg []float64 // nb×C: logits (then probabilities), R{z}, G, R{G}
	discardTail []float64 // DimX: tail parameter gradients not asked for
}

// NewCNNHyperRep returns the hyper-representation problem on the net of
// the given layers on inputs of shape in, its last k parameterised layers
// being the inner variable x. It returns SplitHyperRep's errors; it panics
// on a negative or non-finite μ.
func newOldCNNHyperRep(in nn.Shape, layers []nn.Spec, classes, k int, mu float64) (*oldCNNHyperRep, error) {
	checkL2("NewCNNHyperRep: mu", mu)
	bodyL, tailL, f, err := SplitHyperRep(in, layers, classes, k)
	if err != nil {
		return nil, err
	}
	return newOldCNNHyperRepParts(in, bodyL, tailL, f, classes, mu)
}

func newOldCNNHyperRepParts(in nn.Shape, bodyL, tailL []nn.Spec, f, classes int, mu float64) (*oldCNNHyperRep, error) {
	body, err := nn.New(in, bodyL, f)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	hs := nn.Shape{C: f, H: 1, W: 1}
	tail, err := nn.New(hs, tailL, classes)
	if err != nil {
		return nil, fmt.Errorf("tail: %w", err)
	}
	return &oldCNNHyperRep{body: body, tail: tail, in: in, bodyLayers: bodyL, tailLayers: tailL,
		features: in.Size(), feat: f, classes: classes, mu: mu}, nil
}

// DimX implements Bilevel: the tail's parameters.
func (m *oldCNNHyperRep) DimX() int { return m.tail.Dim() }

// DimLambda implements Bilevel: the body's parameters.
func (m *oldCNNHyperRep) DimLambda() int { return m.body.Dim() }

// Clone implements Bilevel: the same nets with their own workspaces and an
// empty cache.
func (m *oldCNNHyperRep) Clone() Bilevel {
	c, err := newOldCNNHyperRepParts(m.in, m.bodyLayers, m.tailLayers, m.feat, m.classes, m.mu)
	if err != nil {
		panic("models: Clone of a valid oldCNNHyperRep failed: " + err.Error())
	}
	return c
}

// Init implements Bilevel: the tail's layers drawn as PyTorch's defaults
// (see nn.Net.Init).
func (m *oldCNNHyperRep) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimX())
	m.tail.Init(dst, r)
}

// InitLambda implements LambdaInitializer: the body's layers drawn as
// PyTorch's defaults.
func (m *oldCNNHyperRep) InitLambda(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimLambda())
	m.body.Init(dst, r)
}

var (
	_ Bilevel           = (*oldCNNHyperRep)(nil)
	_ LambdaInitializer = (*oldCNNHyperRep)(nil)
)

func (m *oldCNNHyperRep) check(x, lambda []float64, d *datasets.Dataset) {
	checkArgs(m, x, lambda, d, m.features, m.classes)
}

// chunk leaves the features of the batch rows lo…hi−1 (positions in idx)
// in the rows of m.hb, checks their labels and returns nb = hi − lo. With
// full it runs the body on all the chunk's rows, so that a body VJP can
// follow; otherwise only on the rows the cache lacks. Either way the cache
// ends up holding every row of the chunk: a row's features do not depend
// on the other rows of its batch (nn computes each sample's outputs in a
// fixed order), so the cache holds the same bits whichever call filled it.
func (m *oldCNNHyperRep) chunk(c *featureCache, lambda []float64, d *datasets.Dataset, idx []int, lo, hi int, full bool) int {
	F, C := m.feat, m.classes
	nb := hi - lo
	for b := range nb {
		label(d, rowIndex(d, idx, lo+b), C)
	}
	m.hb = resize(m.hb, nb*F)
	if full {
		rows := batchRows(&m.a, d, idx, lo, hi)
		m.body.Logits(m.hb, lambda, rows, nb)
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			copy(c.h[i*F:(i+1)*F], m.hb[b*F:(b+1)*F])
			m.cache.mark(c, i)
		}
	} else {
		m.miss = m.cache.misses(m.miss[:0], c, d, idx, lo, hi)
		if nm := len(m.miss); nm > 0 {
			m.a = resize(m.a, nm*m.features)
			m.hm = resize(m.hm, nm*F)
			d.Gather(m.a, m.miss)
			m.body.Logits(m.hm, lambda, m.a, nm)
			for k, i := range m.miss {
				copy(c.h[i*F:(i+1)*F], m.hm[k*F:(k+1)*F])
			}
		}
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			copy(m.hb[b*F:(b+1)*F], c.h[i*F:(i+1)*F])
		}
	}
	for _, buf := range []*[]float64{&m.z, &m.v, &m.g, &m.rg} {
		*buf = resize(*buf, nb*C)
	}
	m.gh = resize(m.gh, nb*F)
	return nb
}

// logits runs the tail on the chunk's features into m.z.
func (m *oldCNNHyperRep) logits(x []float64, nb int) {
	m.tail.Logits(m.z[:nb*m.classes], x, m.hb[:nb*m.feat], nb)
}

// softmaxGrad turns the logits of the chunk into probabilities, writes
// G = inv·(p − e_y) into m.g and returns the chunk's summed cross-entropy.
func (m *oldCNNHyperRep) softmaxGrad(d *datasets.Dataset, idx []int, lo, nb int, inv float64) float64 {
	C := m.classes
	var loss float64
	for b := range nb {
		y := d.Y[rowIndex(d, idx, lo+b)]
		z, g := m.z[b*C:(b+1)*C], m.g[b*C:(b+1)*C]
		lse := vec.LogSumExp(z)
		loss += lse - z[y]
		for j := range C {
			z[j] = math.Exp(z[j] - lse)
			g[j] = z[j]
			if j == y {
				g[j]--
			}
			g[j] *= inv
		}
	}
	return loss
}

// rGrad writes R{G} = inv·(p ⊙ R{z} − p (pᵀR{z})) into m.rg from the
// probabilities in m.z and R{z} in m.v.
func (m *oldCNNHyperRep) rGrad(nb int, inv float64) {
	C := m.classes
	for b := range nb {
		p, rz, rg := m.z[b*C:(b+1)*C], m.v[b*C:(b+1)*C], m.rg[b*C:(b+1)*C]
		var s float64
		for j := range C {
			s += p[j] * rz[j]
		}
		for j := range C {
			rg[j] = inv * p[j] * (rz[j] - s)
		}
	}
}

// InnerLoss implements Bilevel: g.
func (m *oldCNNHyperRep) InnerLoss(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	C := m.classes
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		for b := range nb {
			z := m.z[b*C : (b+1)*C]
			loss += vec.LogSumExp(z) - z[d.Y[rowIndex(d, idx, lo+b)]]
		}
	}
	return loss/float64(n) + 0.5*m.mu*sumSquares(x)
}

// InnerGrad implements Bilevel: ∇ₓg, by the tail alone.
func (m *oldCNNHyperRep) InnerGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		loss += m.softmaxGrad(d, idx, lo, nb, inv)
		m.tail.VJP(dst, x, m.g[:nb*m.classes])
	}
	vec.AddScaled(dst, m.mu, x)
	return loss*inv + 0.5*m.mu*sumSquares(x)
}

// InnerHVP implements Bilevel: ∇²ₓₓg·u, by the tail alone.
func (m *oldCNNHyperRep) InnerHVP(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	checkVec("u", u, m.DimX())
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	C := m.classes
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		m.tail.JVP(m.v[:nb*C], x, u)
		m.softmaxGrad(d, idx, lo, nb, inv)
		m.rGrad(nb, inv)
		m.tail.VJPR(dst, x, u, m.g[:nb*C], m.rg[:nb*C])
	}
	vec.AddScaled(dst, m.mu, u)
}

// InnerCross implements Bilevel: the gradient in λ of ⟨∇ₓg, u⟩, the
// body's VJP of its gradient in h (μ‖x‖² does not depend on λ).
func (m *oldCNNHyperRep) InnerCross(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimLambda())
	checkVec("u", u, m.DimX())
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	C, F := m.classes, m.feat
	m.discardTail = resize(m.discardTail, m.DimX())
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, true)
		m.logits(x, nb)
		m.tail.JVP(m.v[:nb*C], x, u)
		m.softmaxGrad(d, idx, lo, nb, inv)
		m.rGrad(nb, inv)
		// The tail's parameter part is ∇²ₓₓg·u, not wanted here; it is
		// cleared so that it cannot grow over many calls.
		clear(m.discardTail)
		m.tail.VJPRInput(m.discardTail, m.gh[:nb*F], x, u, m.g[:nb*C], m.rg[:nb*C])
		m.body.VJP(dst, lambda, m.gh[:nb*F])
	}
}

// OuterGradTakesNil implements PartialOuter.
func (*oldCNNHyperRep) OuterGradTakesNil() {}

// OuterGrad implements Bilevel: f = mean CE, ∂ₓf by the tail and ∂_λf by
// the body's VJP of the tail's gradient in h. dstX or dstLambda may be nil
// when that part is not wanted.
func (m *oldCNNHyperRep) OuterGrad(dstX, dstLambda, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	if dstX != nil {
		checkVec("dstX", dstX, m.DimX())
		clear(dstX)
	}
	if dstLambda != nil {
		checkVec("dstLambda", dstLambda, m.DimLambda())
		clear(dstLambda)
	}
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	C, F := m.classes, m.feat
	gx := dstX
	if gx == nil && dstLambda != nil {
		m.discardTail = resize(m.discardTail, m.DimX())
		clear(m.discardTail)
		gx = m.discardTail
	}
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, dstLambda != nil)
		m.logits(x, nb)
		loss += m.softmaxGrad(d, idx, lo, nb, inv)
		switch {
		case dstLambda != nil:
			m.tail.VJPInput(gx, m.gh[:nb*F], x, m.g[:nb*C])
			m.body.VJP(dstLambda, lambda, m.gh[:nb*F])
		case dstX != nil:
			m.tail.VJP(dstX, x, m.g[:nb*C])
		}
	}
	return loss * inv
}

// Accuracy implements Bilevel.
func (m *oldCNNHyperRep) Accuracy(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	C := m.classes
	right := 0
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		right += hits(m.z, C, d, idx, lo, nb)
	}
	return float64(right) / float64(n)
}
