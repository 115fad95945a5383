package models

import (
	"math"

	"hgpsim/datasets"
	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
	"hgpsim/models/nn"
)

// logits runs the tail on the chunk's features into m.z.
func (m *HyperRep[F]) logits(x []F, nb int) {
	m.tail.Logits(m.z[:nb*m.classes], x, m.hb[:nb*m.feat], nb)
}

// softmaxGrad turns the logits of the chunk into probabilities, writes
// G = inv·(p − e_y) into m.g (and p − e_y into m.gu) and returns loss plus
// the chunk's cross-entropies. The MLP cut's recorded runs added them to
// loss row after row, the cut nets' as one sum per chunk.
func (m *HyperRep[F]) softmaxGrad(loss float64, d *datasets.Dataset, idx []int, lo, nb int, inv float64) float64 {
	C := m.classes
	var chunk float64
	acc := &chunk
	if m.mlp {
		acc = &loss
	}
	for b := range nb {
		y := d.Y[rowIndex(d, idx, lo+b)]
		z, g, gu := m.z[b*C:(b+1)*C], m.g[b*C:(b+1)*C], m.gu[b*C:(b+1)*C]
		lse := logSumExp(z)
		*acc += lse - float64(z[y])
		for j := range C {
			z[j] = F(math.Exp(float64(z[j]) - lse))
			gu[j] = z[j]
			if j == y {
				gu[j]--
			}
			g[j] = gu[j] * F(inv)
		}
	}
	if m.mlp {
		return loss
	}
	return loss + chunk
}

// rGrad writes R{G} = inv·(p ⊙ R{z} − p (pᵀR{z})) into m.rg from the
// probabilities in m.z and R{z} in m.v.
func (m *HyperRep[F]) rGrad(nb int, inv float64) {
	C := m.classes
	nn.SoftmaxRGrad(m.rg[:nb*C], m.z[:nb*C], m.v[:nb*C], C, F(inv))
}

// tangents runs the chunk of rows lo…hi−1 forward (chunk) and along u:
// the probabilities in m.z, R{z} in m.v, G in m.g and R{G} in m.rg. It
// returns the chunk's rows.
func (m *HyperRep[F]) tangents(c *featureCache[F], x []F, d *datasets.Dataset, idx []int, lo, hi int, full bool, u []F, inv float64) int {
	nb := m.chunk(c, m.lam, d, idx, lo, hi, full)
	m.logits(x, nb)
	m.tail.JVP(m.v[:nb*m.classes], x, u)
	m.softmaxGrad(0, d, idx, lo, nb, inv)
	m.rGrad(nb, inv)
	return nb
}

// begin checks the arguments every product shares and returns the cache
// of d for λ, the batch's rows and 1/n.
func (m *HyperRep[F]) begin(x []F, lambda []float64, d *datasets.Dataset, idx []int) (*featureCache[F], int, float64) {
	m.check(x, lambda, d)
	n := batchSize(d, idx)
	if vec.Is64[F]() {
		m.lam = vec.View[F](lambda)
	} else {
		m.lam = resize(m.lam, len(lambda))
		vec.Narrow(m.lam, lambda)
	}
	return m.cache.of(lambda, d, m.feat), n, 1 / float64(n)
}

// InnerLoss implements Bilevel: g.
func (m *HyperRep[F]) InnerLoss(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	c, n, _ := m.begin(x, lambda, d, idx)
	C := m.classes
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, m.lam, d, idx, lo, hi, false)
		m.logits(x, nb)
		for b := range nb {
			z := m.z[b*C : (b+1)*C]
			loss += logSumExp(z) - float64(z[d.Y[rowIndex(d, idx, lo+b)]])
		}
	}
	return loss/float64(n) + m.penalty(x)
}

// InnerGrad implements Bilevel: ∇ₓg, by the tail alone.
func (m *HyperRep[F]) InnerGrad(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	checkVec("dst", dst, m.DimX())
	c, n, inv := m.begin(x, lambda, d, idx)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, m.lam, d, idx, lo, hi, false)
		m.logits(x, nb)
		loss = m.softmaxGrad(loss, d, idx, lo, nb, inv)
		m.tail.VJP(dst, x, m.g[:nb*m.classes])
	}
	m.addPenaltyGrad(dst, x)
	return loss*inv + m.penalty(x)
}

// InnerHVP implements Bilevel: ∇²ₓₓg·u, by the tail alone.
func (m *HyperRep[F]) InnerHVP(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F) {
	checkVec("dst", dst, m.DimX())
	checkVec("u", u, m.DimX())
	c, n, inv := m.begin(x, lambda, d, idx)
	C := m.classes
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.tangents(c, x, d, idx, lo, hi, false, u, inv)
		m.tail.VJPR(dst, x, u, m.g[:nb*C], m.rg[:nb*C])
	}
	m.addPenaltyHVP(dst, x, u)
}

// InnerCross implements Bilevel: the gradient in λ of ⟨∇ₓg, u⟩, the
// body's VJP of its gradient in h (the penalty does not depend on λ).
func (m *HyperRep[F]) InnerCross(dst []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F) {
	checkVec("dst", dst, m.DimLambda())
	checkVec("u", u, m.DimX())
	c, n, inv := m.begin(x, lambda, d, idx)
	C, nf := m.classes, m.feat
	m.discardTail = resize(m.discardTail, m.DimX())
	if m.mlp {
		m.interleave(x, u)
	}
	gl := m.lambdaGrad(dst)
	clear(gl)
	for lo, hi := range chunks(n) {
		nb := m.tangents(c, x, d, idx, lo, hi, true, u, inv)
		if m.mlp {
			m.crossFeaturesMLP(nb)
		} else {
			// The tail's parameter part is ∇²ₓₓg·u, not wanted here; it
			// is cleared so that it cannot grow over many calls.
			clear(m.discardTail)
			m.tail.VJPRInput(m.discardTail, m.gh[:nb*nf], x, u, m.g[:nb*C], m.rg[:nb*C])
		}
		m.backFeatures(gl, nb, inv)
	}
	m.widen(dst, gl)
}

// interleave fills m.xu with the rows W_0, U_0, W_1, U_1, … of the MLP
// cut's output weights in x and u.
func (m *HyperRep[F]) interleave(x, u []F) {
	nf, C := m.feat, m.classes
	m.xu = resize(m.xu, 2*C*nf)
	for j := range C {
		copy(m.xu[2*j*nf:(2*j+1)*nf], x[j*nf:(j+1)*nf])
		copy(m.xu[(2*j+1)*nf:(2*j+2)*nf], u[j*nf:(j+1)*nf])
	}
}

// crossFeaturesMLP writes into m.gh the MLP cut's ∂/∂h ⟨∇ₓg, u⟩ before
// the 1/n: Wᵀ R{p} + Uᵀ(p − e_y), with R{p} = p ⊙ R{z} − p (pᵀR{z}). Its
// recorded runs summed R{p}_j W_j and then (p − e_y)_j U_j for each class
// j in turn, and scaled by 1/n after (backFeatures); the product
// interleaves the pairs along k the same way. (The tail's VJPRInput takes
// the two sums one after the other, on G already scaled.)
func (m *HyperRep[F]) crossFeaturesMLP(nb int) {
	nf, C := m.feat, m.classes
	m.g2 = resize(m.g2, 2*nb*C)
	for b := range nb {
		p, rz := m.z[b*C:(b+1)*C], m.v[b*C:(b+1)*C]
		var s float64
		for j := range C {
			s += float64(p[j]) * float64(rz[j])
		}
		pg := m.g2[2*b*C : 2*(b+1)*C]
		for j := range C {
			pg[2*j] = F(float64(p[j]) * (float64(rz[j]) - s)) // R{p}_j
			pg[2*j+1] = m.gu[b*C+j]
		}
	}
	clear(m.gh[:nb*nf])
	gemm.AccNN(nb, nf, 2*C, m.g2, 2*C, m.xu, nf, m.gh, nf)
}

// backFeatures adds the body's VJP of the gradient in the features h_b in
// m.gh to dst: the gradient in the masked features times the dropout
// factors is that in the unmasked ones, and the MLP cut's gradient, formed
// before the 1/n, is scaled here.
func (m *HyperRep[F]) backFeatures(dst []F, nb int, inv float64) {
	gh := m.gh[:nb*m.feat]
	if m.masking {
		for i, f := range m.keep[:len(gh)] {
			gh[i] *= f
		}
	}
	if m.mlp {
		for i := range gh {
			gh[i] *= F(inv)
		}
	}
	m.body.VJP(dst, m.lam, gh)
}

// OuterGradTakesNil implements PartialOuter.
func (*HyperRep[F]) OuterGradTakesNil() {}

// OuterGrad implements Bilevel: f = mean CE, ∂ₓf by the tail and ∂_λf by
// the body's VJP of the tail's gradient in h. dstX or dstLambda may be nil
// when that part is not wanted.
func (m *HyperRep[F]) OuterGrad(dstX []F, dstLambda []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	clearOuter(m, dstX, dstLambda)
	c, n, inv := m.begin(x, lambda, d, idx)
	C, nf := m.classes, m.feat
	m.discardTail = resize(m.discardTail, m.DimX())
	var gl []F
	if dstLambda != nil {
		gl = m.lambdaGrad(dstLambda)
		clear(gl)
	}
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, m.lam, d, idx, lo, hi, dstLambda != nil)
		m.logits(x, nb)
		loss = m.softmaxGrad(loss, d, idx, lo, nb, inv)
		if dstLambda == nil {
			if dstX != nil {
				m.tail.VJP(dstX, x, m.g[:nb*C])
			}
			continue
		}
		// The MLP cut formed ∂f/∂h from p − e_y before the 1/n
		// (backFeatures), and ∂ₓf from G apart.
		gx, G := dstX, m.g[:nb*C]
		if m.mlp {
			if dstX != nil {
				m.tail.VJP(dstX, x, G)
			}
			gx, G = nil, m.gu[:nb*C]
		}
		if gx == nil {
			clear(m.discardTail)
			gx = m.discardTail
		}
		m.tail.VJPInput(gx, m.gh[:nb*nf], x, G)
		m.backFeatures(gl, nb, inv)
	}
	if dstLambda != nil {
		m.widen(dstLambda, gl)
	}
	return loss * inv
}

// Accuracy implements Bilevel.
func (m *HyperRep[F]) Accuracy(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	c, n, _ := m.begin(x, lambda, d, idx)
	C := m.classes
	right := 0
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, m.lam, d, idx, lo, hi, false)
		m.logits(x, nb)
		right += hits(m.z, C, d, idx, lo, nb)
	}
	return float64(right) / float64(n)
}

// lambdaGrad returns where the body accumulates a gradient in λ for the
// float64 dst: dst itself for float64, m.lamGrad for float32.
func (m *HyperRep[F]) lambdaGrad(dst []float64) []F {
	if vec.Is64[F]() {
		return vec.View[F](dst)
	}
	m.lamGrad = resize(m.lamGrad, len(dst))
	return m.lamGrad
}

// widen writes the body's gradient gl into dst, for float32 (for float64
// gl is dst).
func (m *HyperRep[F]) widen(dst []float64, gl []F) {
	if vec.Is64[F]() {
		return
	}
	for i, v := range gl {
		dst[i] = float64(v)
	}
}
