package datasets

import (
	"fmt"
	"math"
)

// Levels is the decode table of a coded Dataset: code c stands for the
// feature value Levels[c]. A table is never modified once a Dataset refers
// to it, so datasets cut from one another share it.
type Levels [256]float64

// Dataset is a labelled design matrix, row-major.
//
// Row i has label Y[i] and D features, held in one of two ways:
//   - as float64, X[i*D:(i+1)*D], when Levels is nil (generated data);
//   - as one byte per feature, Codes[i*D:(i+1)*D], each standing for its
//     entry of Levels, when Levels is not nil (images: a 784-pixel image is
//     784 bytes instead of 6,272). X is then nil.
//
// A coded Dataset holds no approximation: the table maps each code to the
// float64 its value had in the float64 layout, so every consumer sees the
// same bits either way. Models read rows through Gather (and batchRows),
// which decode into the caller's buffer, so a coded Dataset never exists
// as float64 in full.
//
// The fields are exported so that loaders can build a Dataset without
// copying; a Dataset is read-only once built, so any number of models and
// goroutines may share it, and models may keep what they computed from its
// rows (decoded chunks, hidden features) keyed by its address.
type Dataset struct {
	X       []float64 // N×D row-major features; nil when coded
	Codes   []uint8   // N×D row-major feature codes when coded
	Levels  *Levels   // decode table of Codes; nil: the features are X
	Y       []int     // N labels in [0, C)
	N, D, C int
}

// Coded reports whether d holds its features as Codes.
func (d *Dataset) Coded() bool { return d.Levels != nil }

// Row returns the features of example i. For a float64 Dataset the slice
// aliases d.X and is capped at the row's end, so an append by the caller
// cannot overwrite row i+1. For a coded Dataset it is a fresh decoded copy;
// loops over many rows should decode into a buffer of their own with
// Gather instead.
func (d *Dataset) Row(i int) []float64 {
	if i < 0 || i >= d.N {
		panic(fmt.Sprintf("datasets: row %d out of range [0, %d)", i, d.N))
	}
	lo, hi := i*d.D, (i+1)*d.D
	if d.Levels == nil {
		return d.X[lo:hi:hi]
	}
	out := make([]float64, d.D)
	d.Levels.decode(out, d.Codes[lo:hi])
	return out
}

// Floats returns every feature of d as float64, row-major: d.X itself for a
// float64 Dataset (which the caller must not modify), a fresh decoded copy
// for a coded one.
func (d *Dataset) Floats() []float64 {
	if d.Levels == nil {
		return d.X
	}
	out := make([]float64, len(d.Codes))
	d.Levels.decode(out, d.Codes)
	return out
}

// decode writes the value of each code of src into dst.
func (l *Levels) decode(dst []float64, src []uint8) {
	dst = dst[:len(src)]
	for j, c := range src {
		dst[j] = l[c]
	}
}

// sameLevels reports whether a and b decode every code to the same bits,
// so that rows coded with one may be copied under the other.
func sameLevels(a, b *Levels) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	for c := range a {
		if math.Float64bits(a[c]) != math.Float64bits(b[c]) {
			return false
		}
	}
	return true
}

// byteLevels returns the table of IDX pixels: code p is p/255, so that
// every feature lies in [0, 1].
func byteLevels() *Levels {
	var l Levels
	for p := range l {
		l[p] = float64(p) / 255
	}
	return &l
}

// transform replaces every feature v of d by f(v). A coded Dataset gets a
// new table (the old one may be shared) and keeps its codes, so the cost is
// 256 calls of f whatever N; a float64 Dataset is transformed in place.
// Either way each feature ends up with the bits f gives its old value.
func (d *Dataset) transform(f func(v float64) float64) {
	if d.Levels == nil {
		for i, v := range d.X {
			d.X[i] = f(v)
		}
		return
	}
	var l Levels
	for c, v := range d.Levels {
		l[c] = f(v)
	}
	d.Levels = &l
}

// CheckShape panics when the fields of d contradict each other. It is O(1)
// and runs on every model call, so a hand-built Dataset with a wrong N or D
// fails loudly instead of reading the wrong rows.
func (d *Dataset) CheckShape() {
	if d == nil {
		panic("datasets: nil Dataset")
	}
	if d.N < 0 || d.D < 0 {
		panic(fmt.Sprintf("datasets: Dataset with N=%d, D=%d", d.N, d.D))
	}
	if d.Levels != nil {
		if d.X != nil {
			panic("datasets: coded Dataset with a non-nil X")
		}
		if len(d.Codes) != d.N*d.D {
			panic(fmt.Sprintf("datasets: Dataset has len(Codes)=%d, want N*D=%d*%d=%d", len(d.Codes), d.N, d.D, d.N*d.D))
		}
	} else {
		if d.Codes != nil {
			panic("datasets: Dataset with Codes but no Levels")
		}
		if len(d.X) != d.N*d.D {
			panic(fmt.Sprintf("datasets: Dataset has len(X)=%d, want N*D=%d*%d=%d", len(d.X), d.N, d.D, d.N*d.D))
		}
	}
	if len(d.Y) != d.N {
		panic(fmt.Sprintf("datasets: Dataset has len(Y)=%d, want N=%d", len(d.Y), d.N))
	}
}

// Pool concatenates datasets row-wise, in argument order. It is how the
// pooled reference problem (one central learner holding every client's data)
// is built; the result owns fresh copies of the features and Y. It is coded
// when every part is coded with the same table, float64 otherwise.
//
// All parts must have the same D and C; a mismatch is a programmer error and
// panics. Pool with no parts returns an empty Dataset.
func Pool(parts ...*Dataset) *Dataset {
	if len(parts) == 0 {
		return &Dataset{}
	}
	n := 0
	for k, p := range parts {
		p.CheckShape()
		if p.D != parts[0].D || p.C != parts[0].C {
			panic(fmt.Sprintf("datasets: Pool: part %d has D=%d, C=%d; part 0 has D=%d, C=%d",
				k, p.D, p.C, parts[0].D, parts[0].C))
		}
		n += p.N
	}
	out := newLike(parts, n, parts[0].C)
	at := 0
	for _, p := range parts {
		copy(out.Y[at:], p.Y)
		out.copyRows(at, p, 0, p.N)
		at += p.N
	}
	return out
}

// newLike returns a Dataset of n rows with the D of parts[0] and c classes,
// coded with the table of the parts when they all share one, float64
// otherwise.
func newLike(parts []*Dataset, n, c int) *Dataset {
	d := parts[0].D
	lv := parts[0].Levels
	for _, p := range parts[1:] {
		if !sameLevels(p.Levels, lv) {
			lv = nil
			break
		}
	}
	out := &Dataset{Y: make([]int, n), N: n, D: d, C: c, Levels: lv}
	if lv != nil {
		out.Codes = make([]uint8, n*d)
	} else {
		out.X = make([]float64, n*d)
	}
	return out
}

// copyRows copies rows lo…hi−1 of src into d from row at on, decoding them
// if d is float64 and src coded. A coded d requires src to be coded with
// the same table (newLike guarantees it).
func (d *Dataset) copyRows(at int, src *Dataset, lo, hi int) {
	D := d.D
	dst, from := at*D, lo*D
	switch {
	case d.Levels != nil:
		copy(d.Codes[dst:dst+(hi-lo)*D], src.Codes[from:hi*D])
	case src.Levels != nil:
		src.Levels.decode(d.X[dst:dst+(hi-lo)*D], src.Codes[from:hi*D])
	default:
		copy(d.X[dst:dst+(hi-lo)*D], src.X[from:hi*D])
	}
}

// Gather writes the features of the rows idx, in order, into dst (a
// len(idx)×D matrix), decoding coded rows, so that a minibatch can be
// multiplied as one matrix. It panics when len(dst) != len(idx)·D or an
// index is out of range.
func (d *Dataset) Gather(dst []float64, idx []int) {
	if len(dst) != len(idx)*d.D {
		panic(fmt.Sprintf("datasets: Gather of %d rows of %d into %d elements", len(idx), d.D, len(dst)))
	}
	D := d.D
	for k, i := range idx {
		if i < 0 || i >= d.N {
			panic(fmt.Sprintf("datasets: minibatch index %d out of range [0, %d)", i, d.N))
		}
		if d.Levels != nil {
			d.Levels.decode(dst[k*D:(k+1)*D], d.Codes[i*D:(i+1)*D])
		} else {
			copy(dst[k*D:(k+1)*D], d.X[i*D:(i+1)*D])
		}
	}
}

// GatherRange writes the features of rows lo…hi−1 into dst (a (hi−lo)×D
// matrix), decoding coded rows. It panics when the range is outside
// [0, N] or len(dst) != (hi−lo)·D.
func (d *Dataset) GatherRange(dst []float64, lo, hi int) {
	if lo < 0 || hi > d.N || lo > hi {
		panic(fmt.Sprintf("datasets: rows %d…%d out of range [0, %d)", lo, hi, d.N))
	}
	if len(dst) != (hi-lo)*d.D {
		panic(fmt.Sprintf("datasets: GatherRange of %d rows of %d into %d elements", hi-lo, d.D, len(dst)))
	}
	if d.Levels != nil {
		d.Levels.decode(dst, d.Codes[lo*d.D:hi*d.D])
		return
	}
	copy(dst, d.X[lo*d.D:hi*d.D])
}
