package models

import (
	"hgpsim/datasets"
	"hgpsim/internal/vec"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Part of the row-by-row reference models (see rowref_test.go).

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
type refWeighted struct {
	c             refClassifier
	z, g, rz, rg  []float64
	features, cls int
}

// probs turns the logits in z into probabilities in g, minus e_y, and
// returns the row's cross-entropy.
func (w *refWeighted) probs(y int) float64 {
	lse := vec.LogSumExp(w.z)
	for j := range w.cls {
		w.g[j] = math.Exp(w.z[j] - lse)
	}
	loss := lse - w.z[y]
	w.g[y]--
	return loss
}

// Loss returns g(x; λ) on the batch.
func (w *refWeighted) Loss(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {

	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, w.cls)
		w.c.rowLogits(w.z, x, d.Row(i))
		loss += weightOf(lambda, i) * (vec.LogSumExp(w.z) - w.z[y])
	}
	return loss/float64(n) + 0.5*w.c.l2Rate()*sumSquares(x)
}

// Grad writes ∇ₓg(x; λ) into dst and returns g. dst must not alias x.
func (w *refWeighted) Grad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {

	checkVec("dst", dst, w.c.Dim())
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
	floats.AddScaled(dst, w.c.l2Rate(), x)
	return loss*inv + 0.5*w.c.l2Rate()*sumSquares(x)
}

// HVP writes dst = ∇²ₓg(x; λ)·u. dst must not alias x or u.
func (w *refWeighted) HVP(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {

	checkVec("dst", dst, w.c.Dim())
	checkVec("u", u, w.c.Dim())
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
	floats.AddScaled(dst, w.c.l2Rate(), u)
}

// SampleDirectional writes dst[k] = ⟨∇ℓ(x; s_i), u⟩ for the k-th selected
// row i (no regularizer, no weight): the forward R-operator of the row's
// cross-entropy, (p − e_y)ᵀ R{z}. It costs two forward passes per row.
func (w *refWeighted) SampleDirectional(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {

	checkVec("u", u, w.c.Dim())
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
func (w *refWeighted) SampleGrad(dst, x []float64, d *datasets.Dataset, i int) float64 {

	checkVec("dst", dst, w.c.Dim())
	clear(dst)
	y := label(d, i, w.cls)
	a := d.Row(i)
	w.c.rowLogits(w.z, x, a)
	loss := w.probs(y)
	w.c.rowVJP(dst, x, a, w.g)
	return loss
}
