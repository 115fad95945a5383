package datasets

import "fmt"

// Float is an element type a model computes in.
type Float interface{ float32 | float64 }

// GatherAs is Gather into a buffer of F: a float32 model's minibatch,
// each feature rounded to F once (coded rows decode straight to F, with
// no float64 copy of the batch). For F = float64 it writes the bits
// Gather writes.
func GatherAs[F Float](d *Dataset, dst []F, idx []int) {
	if len(dst) != len(idx)*d.D {
		panic(fmt.Sprintf("datasets: Gather of %d rows of %d into %d elements", len(idx), d.D, len(dst)))
	}
	D := d.D
	for k, i := range idx {
		if i < 0 || i >= d.N {
			panic(fmt.Sprintf("datasets: minibatch index %d out of range [0, %d)", i, d.N))
		}
		rowsAs(d, dst[k*D:(k+1)*D], i*D, (i+1)*D)
	}
}

// GatherRangeAs is GatherRange into a buffer of F.
func GatherRangeAs[F Float](d *Dataset, dst []F, lo, hi int) {
	if lo < 0 || hi > d.N || lo > hi {
		panic(fmt.Sprintf("datasets: rows %d…%d out of range [0, %d)", lo, hi, d.N))
	}
	if len(dst) != (hi-lo)*d.D {
		panic(fmt.Sprintf("datasets: GatherRange of %d rows of %d into %d elements", hi-lo, d.D, len(dst)))
	}
	rowsAs(d, dst, lo*d.D, hi*d.D)
}

// rowsAs writes the features at flat positions lo…hi−1 into dst as F.
func rowsAs[F Float](d *Dataset, dst []F, lo, hi int) {
	if d.Levels != nil {
		for j, c := range d.Codes[lo:hi] {
			dst[j] = F(d.Levels[c])
		}
		return
	}
	for j, v := range d.X[lo:hi] {
		dst[j] = F(v)
	}
}
