package models

import (
	"hgpsim/datasets"
	"math"
	"math/rand/v2"
)

// SampleWeighted is the per-sample weighted loss of Comm-FedBiO
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
type SampleWeighted[F Float] struct {
	c             Classifier[F]
	s             classifierScratch[F] // z, g, v = R{z}, r = R{g} per chunk row
	keep          []int                // rows with a non-zero weight
	features, cls int
}

// NewSampleWeighted returns the weighted loss of c (which it clones).
func NewSampleWeighted[F Float](c Classifier[F]) *SampleWeighted[F] {
	c = c.Clone().(Classifier[F])
	f, k := c.shape()
	return &SampleWeighted[F]{c: c, features: f, cls: k}
}

// ClassifierOf returns the classifier of a plain bilevel model (the
// scenario's `model:` without a head), or false.
func ClassifierOf[F Float](b Bilevel[F]) (Classifier[F], bool) {
	p, ok := b.(*plain[F])
	if !ok {
		return nil, false
	}
	c, ok := p.m.(Classifier[F])
	return c, ok
}

// Clone returns a SampleWeighted with its own scratch.
func (w *SampleWeighted[F]) Clone() *SampleWeighted[F] { return NewSampleWeighted(w.c) }

// Dim returns the number of parameters.
func (w *SampleWeighted[F]) Dim() int { return w.c.Dim() }

// L2 returns the regularization rate μ.
func (w *SampleWeighted[F]) L2() float64 { return w.c.l2Rate() }

// Init writes initial parameters into dst.
func (w *SampleWeighted[F]) Init(dst []F, r *rand.Rand) { w.c.Init(dst, r) }

// Accuracy is the classifier's accuracy on the batch.
func (w *SampleWeighted[F]) Accuracy(x []F, d *datasets.Dataset, idx []int) float64 {
	w.c.hold()
	defer w.c.unhold()
	return w.c.Accuracy(x, d, idx)
}

func weightOf(lambda []float64, i int) float64 {
	if lambda == nil {
		return 1
	}
	return lambda[i]
}

// probs turns the logits in z into probabilities in g, minus e_y, and
// returns the row's cross-entropy.
func (w *SampleWeighted[F]) probs(z, g []F, y int) float64 {
	lse := logSumExp(z)
	for j := range w.cls {
		g[j] = F(math.Exp(float64(z[j]) - lse))
	}
	loss := lse - float64(z[y])
	g[y]--
	return loss
}

func (w *SampleWeighted[F]) check(x []F, d *datasets.Dataset, lambda []float64) {
	checkVec("x", x, w.Dim())
	checkData(d, w.features, w.cls)
	if lambda != nil && len(lambda) != d.N {
		panic("models: SampleWeighted: len(lambda) != d.N")
	}
}

// Loss returns g(x; λ) on the batch.
func (w *SampleWeighted[F]) Loss(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	w.c.hold()
	defer w.c.unhold()
	w.check(x, d, lambda)
	C := w.cls
	n := batchSize(d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := hi - lo
		w.s.grow(nb, C)
		w.c.batchLogits(w.s.z, x, batchRows(&w.s.a, d, idx, lo, hi), nb)
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			y := label(d, i, C)
			z := w.s.z[b*C : (b+1)*C]
			loss += weightOf(lambda, i) * (logSumExp(z) - float64(z[y]))
		}
	}
	return loss/float64(n) + 0.5*w.L2()*sumSquares(x)
}

// Grad writes ∇ₓg(x; λ) into dst and returns g. dst must not alias x.
//
// Rows of weight 0 contribute their (weighted) loss but are left out of
// the backpropagation, as the row loop this replaced skipped them: a zero
// row of G would still add NaN wherever it meets an infinite or NaN value
// (0·∞).
func (w *SampleWeighted[F]) Grad(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	w.c.hold()
	defer w.c.unhold()
	w.check(x, d, lambda)
	checkVec("dst", dst, w.Dim())
	C := w.cls
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := hi - lo
		w.s.grow(nb, C)
		a := batchRows(&w.s.a, d, idx, lo, hi)
		w.c.batchLogits(w.s.z, x, a, nb)
		w.keep = w.keep[:0]
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			y := label(d, i, C)
			lam := weightOf(lambda, i)
			g := w.s.g[len(w.keep)*C : (len(w.keep)+1)*C]
			loss += lam * w.probs(w.s.z[b*C:(b+1)*C], g, y)
			if lam == 0 {
				continue
			}
			scale(lam*inv, g)
			w.keep = append(w.keep, i)
		}
		if len(w.keep) == 0 {
			continue
		}
		if len(w.keep) < nb {
			// Bind the kept rows only; a model with nonlinear logits
			// needs its forward pass on them again.
			w.s.a = resize(w.s.a, len(w.keep)*w.features)
			gatherAs(d, w.s.a, w.keep)
			if bindsRows(w.c) {
				w.c.(statelessRows[F]).bindRows(w.s.a, len(w.keep))
			} else {
				w.c.batchLogits(w.s.z, x, w.s.a, len(w.keep))
			}
		}
		w.c.batchVJP(dst, x, w.s.g[:len(w.keep)*C])
	}
	return loss*inv + 0.5*w.L2()*addScaledSumSquares(dst, w.L2(), x)
}

// HVP writes dst = ∇²ₓg(x; λ)·u. dst must not alias x or u. Rows of
// weight 0 are skipped.
func (w *SampleWeighted[F]) HVP(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F) {
	w.c.hold()
	defer w.c.unhold()
	w.check(x, d, lambda)
	checkVec("dst", dst, w.Dim())
	checkVec("u", u, w.Dim())
	C := w.cls
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	w.keep = w.keep[:0]
	for k := range n {
		i := rowIndex(d, idx, k)
		label(d, i, C)
		if weightOf(lambda, i) != 0 {
			w.keep = append(w.keep, i)
		}
	}
	for lo, hi := range chunks(len(w.keep)) {
		nb := hi - lo
		w.s.grow(nb, C)
		w.c.batchLogits(w.s.z, x, batchRows(&w.s.a, d, w.keep, lo, hi), nb)
		for b := range nb {
			y := d.Y[w.keep[lo+b]]
			w.probs(w.s.z[b*C:(b+1)*C], w.s.g[b*C:(b+1)*C], y)
		}
		w.c.batchJVP(w.s.v, x, u)
		for b := range nb {
			i := w.keep[lo+b]
			y := d.Y[i]
			lam := weightOf(lambda, i)
			g, rz, rg := w.s.g[b*C:(b+1)*C], w.s.v[b*C:(b+1)*C], w.s.r[b*C:(b+1)*C]
			// R{p} = p ⊙ R{z} − p (pᵀR{z}), with p = g + e_y.
			var s float64
			for j := range w.cls {
				p := float64(g[j])
				if j == y {
					p++
				}
				s += p * float64(rz[j])
			}
			c := lam * inv
			for j := range w.cls {
				p := float64(g[j])
				if j == y {
					p++
				}
				rg[j] = F(c * p * (float64(rz[j]) - s))
				g[j] = F(float64(g[j]) * c)
			}
		}
		w.c.batchVJPR(dst, x, u, w.s.g[:nb*C], w.s.r[:nb*C])
	}
	addScaled(dst, w.L2(), u)
}

// SampleDirectional writes dst[k] = ⟨∇ℓ(x; s_i), u⟩ for the k-th selected
// row i (no regularizer, no weight): the forward R-operator of the row's
// cross-entropy, (p − e_y)ᵀ R{z}. It costs two forward passes per row.
func (w *SampleWeighted[F]) SampleDirectional(dst []float64, x []F, d *datasets.Dataset, idx []int, u []F) {
	w.c.hold()
	defer w.c.unhold()
	w.check(x, d, nil)
	checkVec("u", u, w.Dim())
	C := w.cls
	n := batchSize(d, idx)
	for lo, hi := range chunks(n) {
		nb := hi - lo
		w.s.grow(nb, C)
		w.c.batchLogits(w.s.z, x, batchRows(&w.s.a, d, idx, lo, hi), nb)
		for b := range nb {
			y := label(d, rowIndex(d, idx, lo+b), C)
			w.probs(w.s.z[b*C:(b+1)*C], w.s.g[b*C:(b+1)*C], y)
		}
		w.c.batchJVP(w.s.v, x, u)
		for b := range nb {
			dst[lo+b] = dotF(w.s.g[b*C:(b+1)*C], w.s.v[b*C:(b+1)*C])
		}
	}
}

// SampleGrad writes ∇ℓ(x; s_i) of row i into dst (no regularizer) and
// returns ℓ.
func (w *SampleWeighted[F]) SampleGrad(dst, x []F, d *datasets.Dataset, i int) float64 {
	w.c.hold()
	defer w.c.unhold()
	w.check(x, d, nil)
	checkVec("dst", dst, w.Dim())
	clear(dst)
	y := label(d, i, w.cls)
	w.s.grow(1, w.cls)
	w.c.batchLogits(w.s.z, x, batchRows(&w.s.a, d, nil, i, i+1), 1)
	loss := w.probs(w.s.z, w.s.g, y)
	w.c.batchVJP(dst, x, w.s.g)
	return loss
}

// Probability returns the model's probability of row i's label.
func (w *SampleWeighted[F]) Probability(x []F, d *datasets.Dataset, i int) float64 {
	w.c.hold()
	defer w.c.unhold()
	y := label(d, i, w.cls)
	w.s.grow(1, w.cls)
	w.c.batchLogits(w.s.z, x, batchRows(&w.s.a, d, nil, i, i+1), 1)
	return math.Exp(float64(w.s.z[y]) - logSumExp(w.s.z))
}
