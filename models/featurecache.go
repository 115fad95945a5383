package models

import (
	"hgpsim/datasets"
	"slices"
)

// featureCache holds the features of a dataset's rows for the λ of one
// generation of its featureCaches (row i valid when done[i] equals the
// generation).
type featureCache[F Float] struct {
	d    *datasets.Dataset
	h    []F
	done []uint64
}

// maxFeatureCaches bounds the datasets whose features are kept (train,
// validation, test and one more).
const maxFeatureCaches = 4

// featureCaches keeps the λ-dependent features of the rows of the last few
// datasets a model saw: the features of HyperRep depend on λ and the row
// only, so a batch reuses the rows an earlier batch computed until λ
// changes. Datasets are keyed by address, so they must stay
// unchanged once used.
type featureCaches[F Float] struct {
	lam  []float64 // the λ of the current generation
	gen  uint64    // bumped whenever λ changes, which invalidates every row
	sets []*featureCache[F]
}

// of returns the cache of d (width floats a row) for λ, starting a new
// generation when λ changed.
func (f *featureCaches[F]) of(lambda []float64, d *datasets.Dataset, width int) *featureCache[F] {
	if !slices.Equal(f.lam, lambda) {
		f.lam = append(f.lam[:0], lambda...)
		f.gen++
	}
	for _, c := range f.sets {
		if c.d == d {
			return c
		}
	}
	c := &featureCache[F]{d: d, h: make([]F, d.N*width), done: make([]uint64, d.N)}
	if len(f.sets) == maxFeatureCaches {
		f.sets = f.sets[1:]
	}
	f.sets = append(f.sets, c)
	return c
}

// has reports whether c holds row i's features for the current λ.
func (f *featureCaches[F]) has(c *featureCache[F], i int) bool { return c.done[i] == f.gen }

// mark records that c now holds row i's features for the current λ.
func (f *featureCaches[F]) mark(c *featureCache[F], i int) { c.done[i] = f.gen }

// misses appends to dst the rows at positions lo…hi−1 of idx whose features
// c lacks, marking them as held by the time the caller computes them: a
// row repeated in the batch is listed, and computed, once.
func (f *featureCaches[F]) misses(dst []int, c *featureCache[F], d *datasets.Dataset, idx []int, lo, hi int) []int {
	for p := lo; p < hi; p++ {
		if i := rowIndex(d, idx, p); !f.has(c, i) {
			f.mark(c, i)
			dst = append(dst, i)
		}
	}
	return dst
}
