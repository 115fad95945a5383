package models

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
)

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
type SampleWeighted struct {
	c             Classifier
	z, g, rz, rg  []float64
	features, cls int
}

// NewSampleWeighted returns the weighted loss of c (which it clones).
func NewSampleWeighted(c Classifier) *SampleWeighted {
	c = c.Clone().(Classifier)
	f, k := c.shape()
	return &SampleWeighted{c: c, z: make([]float64, k), g: make([]float64, k),
		rz: make([]float64, k), rg: make([]float64, k), features: f, cls: k}
}

// ClassifierOf returns the classifier of a plain bilevel model (the
// scenario's `model:` without a head), or false.
func ClassifierOf(b Bilevel) (Classifier, bool) {
	p, ok := b.(*plain)
	if !ok {
		return nil, false
	}
	c, ok := p.m.(Classifier)
	return c, ok
}

// Clone returns a SampleWeighted with its own scratch.
func (w *SampleWeighted) Clone() *SampleWeighted { return NewSampleWeighted(w.c) }

// Dim returns the number of parameters.
func (w *SampleWeighted) Dim() int { return w.c.Dim() }

// L2 returns the regularization rate μ.
func (w *SampleWeighted) L2() float64 { return w.c.l2Rate() }

// Init writes initial parameters into dst.
func (w *SampleWeighted) Init(dst []float64, r *rand.Rand) { w.c.Init(dst, r) }

// Accuracy is the classifier's accuracy on the batch.
func (w *SampleWeighted) Accuracy(x []float64, d *Dataset, idx []int) float64 {
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
func (w *SampleWeighted) probs(y int) float64 {
	lse := logSumExp(w.z)
	for j := range w.cls {
		w.g[j] = math.Exp(w.z[j] - lse)
	}
	loss := lse - w.z[y]
	w.g[y]--
	return loss
}

func (w *SampleWeighted) check(x []float64, d *Dataset, lambda []float64) {
	checkVec("x", x, w.Dim())
	checkData(d, w.features, w.cls)
	if lambda != nil && len(lambda) != d.N {
		panic("models: SampleWeighted: len(lambda) != d.N")
	}
}

// Loss returns g(x; λ) on the batch.
func (w *SampleWeighted) Loss(x, lambda []float64, d *Dataset, idx []int) float64 {
	w.check(x, d, lambda)
	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, w.cls)
		w.c.rowLogits(w.z, x, d.Row(i))
		loss += weightOf(lambda, i) * (logSumExp(w.z) - w.z[y])
	}
	return loss/float64(n) + 0.5*w.L2()*sumSquares(x)
}

// Grad writes ∇ₓg(x; λ) into dst and returns g. dst must not alias x.
func (w *SampleWeighted) Grad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {
	w.check(x, d, lambda)
	checkVec("dst", dst, w.Dim())
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
	floats.AddScaled(dst, w.L2(), x)
	return loss*inv + 0.5*w.L2()*sumSquares(x)
}

// HVP writes dst = ∇²ₓg(x; λ)·u. dst must not alias x or u.
func (w *SampleWeighted) HVP(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	w.check(x, d, lambda)
	checkVec("dst", dst, w.Dim())
	checkVec("u", u, w.Dim())
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
	floats.AddScaled(dst, w.L2(), u)
}

// SampleDirectional writes dst[k] = ⟨∇ℓ(x; s_i), u⟩ for the k-th selected
// row i (no regularizer, no weight): the forward R-operator of the row's
// cross-entropy, (p − e_y)ᵀ R{z}. It costs two forward passes per row.
func (w *SampleWeighted) SampleDirectional(dst, x []float64, d *Dataset, idx []int, u []float64) {
	w.check(x, d, nil)
	checkVec("u", u, w.Dim())
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
func (w *SampleWeighted) SampleGrad(dst, x []float64, d *Dataset, i int) float64 {
	w.check(x, d, nil)
	checkVec("dst", dst, w.Dim())
	clear(dst)
	y := label(d, i, w.cls)
	a := d.Row(i)
	w.c.rowLogits(w.z, x, a)
	loss := w.probs(y)
	w.c.rowVJP(dst, x, a, w.g)
	return loss
}

// Probability returns the model's probability of row i's label.
func (w *SampleWeighted) Probability(x []float64, d *Dataset, i int) float64 {
	y := label(d, i, w.cls)
	w.c.rowLogits(w.z, x, d.Row(i))
	return math.Exp(w.z[y] - logSumExp(w.z))
}
