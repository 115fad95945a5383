package models

import (
	"iter"
	"math"

	"hgpsim/datasets"
	"hgpsim/internal/vec"
)

// Classifier is a SecondOrder model whose per-row loss is the softmax
// cross-entropy of logits z(x; a) ∈ R^C of the row's features a:
//
//	f(x) = mean_b [lse(z_b) − z_b,y_b] + (L2/2)‖x‖².
//
// Net implements it: its softmax, tanh-MLP and cnn nets give z directly,
// logistic regression's net its margin m, with z = [0, m] (whose
// cross-entropy is softplus(m) − y m).
//
// The bilevel problems (LabelWeights, Ensemble, MTLDA) and SampleWeighted
// build their losses from these primitives over a minibatch of n rows
// gathered into a contiguous n×D matrix A: the logits, their
// Jacobian-vector product (forward R-operator), their vector-Jacobian
// product (backpropagation) and the R-operator of that backpropagation.
// Each is a few matrix products over the whole batch (package
// internal/gemm) in fixed summation orders. The primitives are unexported, so the set of Classifiers
// is closed to this package.
type Classifier[F Float] interface {
	SecondOrder[F]

	// shape returns the number of features and classes the model fits.
	shape() (features, classes int)
	// l2Rate returns the model's regularization rate L2.
	l2Rate() float64
	// batchLogits writes z(x; a_b) of the n rows of A (n×D) into the rows
	// of Z (n×C), and keeps A and what the following batchJVP, batchVJP
	// and batchVJPR need. A must not change until they have run.
	batchLogits(Z, x, A []F, n int)
	// batchJVP writes V_b = (∂z_b/∂x)·u into the rows of V (n×C), for the
	// rows of the last batchLogits (with the same x), and keeps what
	// batchVJPR needs.
	batchJVP(V, x, u []F)
	// batchVJP adds Σ_b (∂z_b/∂x)ᵀG_b to dst (length Dim), for the rows of
	// the last batchLogits; G is n×C.
	batchVJP(dst, x, G []F)
	// batchVJPR adds Σ_b [(∂z_b/∂x)ᵀRG_b + Σ_j G_bj ∇²z_bj·u] to dst: the
	// derivative along u of batchVJP(x, G) when G changes at the rate RG.
	// It needs batchLogits and then batchJVP(u) of the same x.
	batchVJPR(dst, x, u, G, RG []F)
	// hold keeps the workspace the batch passes take until the matching
	// unhold (see workPool): callers that interleave passes hold around
	// them.
	hold()
	unhold()
}

// batchChunk bounds the rows a model multiplies at once: larger batches
// run in chunks of this many rows, in order, so every output still receives
// its rows' contributions in batch order. Each model value keeps a chunk of
// gathered rows (batchChunk × D; 400 KB for Fashion-MNIST) for every
// client; 64 rows keep that small, and at batch 128 the products ran as
// fast in chunks of 64 as in one of 128, within the noise of the shared
// machine.
const batchChunk = 64

// chunks yields the row ranges [lo, hi) of a batch of n rows in order,
// batchChunk rows at a time.
func chunks(n int) iter.Seq2[int, int] {
	return func(yield func(lo, hi int) bool) {
		for lo := 0; lo < n; lo += batchChunk {
			if !yield(lo, min(lo+batchChunk, n)) {
				return
			}
		}
	}
}

// batchRows returns the features of the batch rows lo…hi−1 (positions in
// idx) as a contiguous (hi−lo)×D matrix of F: a view of d.X when idx is
// nil and both d and F are float64, otherwise the rows gathered (decoded,
// if d is coded; rounded to F) into *buf, which grows as needed.
func batchRows[F Float](buf *[]F, d *datasets.Dataset, idx []int, lo, hi int) []F {
	if !vec.Is64[F]() {
		*buf = resize(*buf, (hi-lo)*d.D)
		if idx == nil {
			datasets.GatherRangeAs(d, *buf, lo, hi)
		} else {
			datasets.GatherAs(d, *buf, idx[lo:hi])
		}
		return *buf
	}
	if idx == nil {
		if !d.Coded() {
			return vec.View[F](d.X[lo*d.D : hi*d.D])
		}
		*buf = resize(*buf, (hi-lo)*d.D)
		d.GatherRange(vec.View[float64](*buf), lo, hi)
		return *buf
	}
	*buf = resize(*buf, (hi-lo)*d.D)
	d.Gather(vec.View[float64](*buf), idx[lo:hi])
	return *buf
}

// classifierScratch holds one chunk's rows and per-row buffers for the
// batch loops below; a model embeds one so that its calls do not allocate
// once the largest chunk has been seen.
type classifierScratch[F Float] struct {
	a          []F // gathered rows (chunk × D)
	z, g, v, r []F // chunk × C: logits (then probabilities), ∂ℓ/∂z, R{z}, R{∂ℓ/∂z}
}

// grow sizes the per-row buffers for nb rows of C classes.
func (s *classifierScratch[F]) grow(nb, C int) {
	s.z = resize(s.z, nb*C)
	s.g = resize(s.g, nb*C)
	s.v = resize(s.v, nb*C)
	s.r = resize(s.r, nb*C)
}

// meanCrossEntropy is (1/|b|) Σ_b −log softmax(z_b)_{y_b} over the batch.
func meanCrossEntropy[F Float](m Classifier[F], s *classifierScratch[F], x []F, d *datasets.Dataset, idx []int) float64 {
	_, C := m.shape()
	n := batchSize(d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		for b := range nb {
			y := label(d, rowIndex(d, idx, lo+b), C)
			z := s.z[b*C : (b+1)*C]
			// −log softmax(z)_y = lse(z) − z_y.
			loss += logSumExp(z) - float64(z[y])
		}
	}
	return loss / float64(n)
}

// classifierAccuracy is the fraction of batch rows whose largest logit is
// the label.
func classifierAccuracy[F Float](m Classifier[F], s *classifierScratch[F], x []F, d *datasets.Dataset, idx []int) float64 {
	_, C := m.shape()
	n := batchSize(d, idx)
	correct := 0
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		correct += hits(s.z, C, d, idx, lo, nb)
	}
	return float64(correct) / float64(n)
}

// classifierGrad writes ∇f(x) into dst and returns f(x): per row
// ∂CE/∂z = p − e_y with p = softmax(z), scaled by 1/n once, backpropagated
// chunk by chunk.
func classifierGrad[F Float](m Classifier[F], s *classifierScratch[F], dst, x []F, d *datasets.Dataset, idx []int) float64 {
	_, C := m.shape()
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		for b := range nb {
			y := label(d, rowIndex(d, idx, lo+b), C)
			z, gb := s.z[b*C:(b+1)*C], s.g[b*C:(b+1)*C]
			lse := logSumExp(z)
			loss += lse - float64(z[y])
			for j := range C {
				g := math.Exp(float64(z[j]) - lse)
				if j == y {
					g--
				}
				g *= inv // the 1/n of the mean, applied once here for every block
				gb[j] = F(g)
			}
		}
		m.batchVJP(dst, x, s.g[:nb*C])
	}
	l2 := m.l2Rate()
	return loss/float64(n) + 0.5*l2*addScaledSumSquares(dst, l2, x)
}

// classifierHVP writes dst = ∇²f(x)·u by the R-operator: per row
//
//	R{z} = (∂z/∂x)·u,  R{p} = p ⊙ R{z} − p (pᵀR{z}),
//
// and backpropagates g_z = (p − e_y)/n with R{g_z} = R{p}/n.
func classifierHVP[F Float](m Classifier[F], s *classifierScratch[F], dst, x []F, d *datasets.Dataset, idx []int, u []F) {
	_, C := m.shape()
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		m.batchJVP(s.v, x, u)
		for b := range nb {
			y := label(d, rowIndex(d, idx, lo+b), C)
			p, rz := s.z[b*C:(b+1)*C], s.v[b*C:(b+1)*C]
			gb, rgb := s.g[b*C:(b+1)*C], s.r[b*C:(b+1)*C]
			lse := logSumExp(p)
			var sum float64
			for j := range C {
				p[j] = F(math.Exp(float64(p[j]) - lse))
				sum += float64(p[j]) * float64(rz[j])
			}
			for j := range C {
				gz := float64(p[j])
				if j == y {
					gz--
				}
				gz *= inv
				gb[j] = F(gz)
				rgb[j] = F(inv * float64(p[j]) * (float64(rz[j]) - sum))
			}
		}
		m.batchVJPR(dst, x, u, s.g[:nb*C], s.r[:nb*C])
	}
	vecAddScaled(dst, m.l2Rate(), u)
}
