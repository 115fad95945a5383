package models

import (
	"fmt"
	"hgpsim/datasets"
	"math/rand/v2"
)

// Model is a differentiable model on flat parameters x ∈ R^Dim().
//
// idx selects the minibatch rows of d; idx == nil means all rows. Losses are
// means over the batch plus the model's regularizer, so that batches of
// different sizes give comparable values and the pooled loss over clients with
// equal data sizes is the average of the clients' losses.
//
// A Model value keeps scratch buffers so that Grad does not allocate; it must
// therefore be used by one goroutine at a time. Give each client (goroutine,
// actor) its own value with Clone. Parameters live in caller-owned slices, not
// in the Model, so a Model carries no state between calls.
//
// Dimension mismatches (len(x) != Dim(), a Dataset with the wrong number of
// features or classes, an index or label out of range, an empty batch) are
// programmer errors and panic.
type Model[F Float] interface {
	// Dim returns the number of parameters.
	Dim() int

	// Init writes initial parameters into dst, drawing from r.
	Init(dst []F, r *rand.Rand)

	// Loss returns f(x) on the rows of d selected by idx.
	Loss(x []F, d *datasets.Dataset, idx []int) float64

	// Grad writes ∇f(x) into dst and returns f(x). It does not allocate.
	// dst must not alias x.
	Grad(dst, x []F, d *datasets.Dataset, idx []int) float64

	// Accuracy returns the fraction of selected rows whose predicted class
	// (the arg-max of the model's output, lowest index on ties) equals the
	// label.
	Accuracy(x []F, d *datasets.Dataset, idx []int) float64

	// Clone returns a Model with the same architecture and regularization
	// and its own scratch buffers.
	Clone() Model[F]
}

// checkVec panics unless len(v) == n. what names the argument in the message.
func checkVec[F Float](what string, v []F, n int) {
	if len(v) != n {
		panic(fmt.Sprintf("models: len(%s)=%d, want Dim()=%d", what, len(v), n))
	}
}

// bilevelDims is the part of Bilevel checkArgs needs.
type bilevelDims interface {
	DimX() int
	DimLambda() int
}

// checkArgs panics unless x and lambda have m's lengths and d has the
// given features and classes: the argument checks of every Bilevel method.
func checkArgs[F Float](m bilevelDims, x []F, lambda []float64, d *datasets.Dataset, features, classes int) {
	checkVec("x", x, m.DimX())
	checkVec("lambda", lambda, m.DimLambda())
	checkData(d, features, classes)
}

// clearOuter checks and clears OuterGrad's destinations, either of which
// may be nil for models that take nil (PartialOuter).
func clearOuter[F Float](m bilevelDims, dstX []F, dstLambda []float64) {
	if dstX != nil {
		checkVec("dstX", dstX, m.DimX())
		clear(dstX)
	}
	if dstLambda != nil {
		checkVec("dstLambda", dstLambda, m.DimLambda())
		clear(dstLambda)
	}
}

// checkData panics unless d is well formed and matches a model with the given
// number of features and classes.
func checkData(d *datasets.Dataset, features, classes int) {
	d.CheckShape()
	if d.D != features || d.C != classes {
		panic(fmt.Sprintf("models: Dataset has D=%d, C=%d; model wants D=%d, C=%d",
			d.D, d.C, features, classes))
	}
}

// label returns Y[i] after checking it is a valid class, so that a corrupt
// label panics with its row instead of indexing past the logits.
func label(d *datasets.Dataset, i, classes int) int {
	y := d.Y[i]
	if y < 0 || y >= classes {
		panic(fmt.Sprintf("models: label Y[%d]=%d out of range [0, %d)", i, y, classes))
	}
	return y
}

// argmax returns the index of the largest element, the lowest on ties.
func argmax[F Float](z []F) int {
	k := 0
	for j, v := range z {
		if v > z[k] {
			k = j
		}
	}
	return k
}

// hits counts the rows b < nb of a chunk whose largest logit in z (nb×C)
// is their label; the chunk starts at position lo of idx.
func hits[F Float](z []F, C int, d *datasets.Dataset, idx []int, lo, nb int) int {
	n := 0
	for b := range nb {
		if argmax(z[b*C:(b+1)*C]) == label(d, rowIndex(d, idx, lo+b), C) {
			n++
		}
	}
	return n
}

// batchSize returns how many rows idx selects from d (all rows when idx is
// nil) and panics on an empty batch: a mean over no examples is undefined,
// and silently returning only the regularizer would hide a sampling bug.
func batchSize(d *datasets.Dataset, idx []int) int {
	n := len(idx)
	if idx == nil {
		n = d.N
	}
	if n == 0 {
		panic("models: empty minibatch")
	}
	return n
}

// rowIndex returns the k-th row selected by idx, checking it against d.
func rowIndex(d *datasets.Dataset, idx []int, k int) int {
	if idx == nil {
		return k
	}
	i := idx[k]
	if i < 0 || i >= d.N {
		panic(fmt.Sprintf("models: minibatch index %d out of range [0, %d)", i, d.N))
	}
	return i
}
