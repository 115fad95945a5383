package models

import "fmt"

// Dataset is a labelled design matrix, row-major.
//
// Row i is the feature vector X[i*D:(i+1)*D] with label Y[i]. The fields are
// exported so that loaders can build a Dataset without copying; a Dataset is
// read-only once built, so any number of models and goroutines may share it.
type Dataset struct {
	X       []float64 // N×D row-major features
	Y       []int     // N labels in [0, C)
	N, D, C int
}

// Row returns the features of example i. The slice aliases d.X and is capped
// at the row's end, so an append by the caller cannot overwrite row i+1.
func (d *Dataset) Row(i int) []float64 {
	if i < 0 || i >= d.N {
		panic(fmt.Sprintf("models: row %d out of range [0, %d)", i, d.N))
	}
	lo, hi := i*d.D, (i+1)*d.D
	return d.X[lo:hi:hi]
}

// checkShape panics when the fields of d contradict each other. It is O(1)
// and runs on every model call, so a hand-built Dataset with a wrong N or D
// fails loudly instead of reading the wrong rows.
func (d *Dataset) checkShape() {
	if d == nil {
		panic("models: nil Dataset")
	}
	if d.N < 0 || d.D < 0 {
		panic(fmt.Sprintf("models: Dataset with N=%d, D=%d", d.N, d.D))
	}
	if len(d.X) != d.N*d.D {
		panic(fmt.Sprintf("models: Dataset has len(X)=%d, want N*D=%d*%d=%d", len(d.X), d.N, d.D, d.N*d.D))
	}
	if len(d.Y) != d.N {
		panic(fmt.Sprintf("models: Dataset has len(Y)=%d, want N=%d", len(d.Y), d.N))
	}
}

// Pool concatenates datasets row-wise, in argument order. It is how the
// pooled reference problem (one central learner holding every client's data)
// is built; the result owns fresh copies of X and Y.
//
// All parts must have the same D and C; a mismatch is a programmer error and
// panics. Pool with no parts returns an empty Dataset.
func Pool(parts ...*Dataset) *Dataset {
	if len(parts) == 0 {
		return &Dataset{}
	}
	n := 0
	for k, p := range parts {
		p.checkShape()
		if p.D != parts[0].D || p.C != parts[0].C {
			panic(fmt.Sprintf("models: Pool: part %d has D=%d, C=%d; part 0 has D=%d, C=%d",
				k, p.D, p.C, parts[0].D, parts[0].C))
		}
		n += p.N
	}
	out := &Dataset{
		X: make([]float64, 0, n*parts[0].D),
		Y: make([]int, 0, n),
		N: n,
		D: parts[0].D,
		C: parts[0].C,
	}
	for _, p := range parts {
		out.X = append(out.X, p.X...)
		out.Y = append(out.Y, p.Y...)
	}
	return out
}

// batchSize returns how many rows idx selects from d (all rows when idx is
// nil) and panics on an empty batch: a mean over no examples is undefined,
// and silently returning only the regularizer would hide a sampling bug.
func batchSize(d *Dataset, idx []int) int {
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
func rowIndex(d *Dataset, idx []int, k int) int {
	if idx == nil {
		return k
	}
	i := idx[k]
	if i < 0 || i >= d.N {
		panic(fmt.Sprintf("models: minibatch index %d out of range [0, %d)", i, d.N))
	}
	return i
}

// Gather copies the features of the rows idx, in order, into dst (a
// len(idx)×D matrix), so that a minibatch can be multiplied as one matrix.
// It panics when len(dst) != len(idx)·D or an index is out of range.
func (d *Dataset) Gather(dst []float64, idx []int) {
	if len(dst) != len(idx)*d.D {
		panic(fmt.Sprintf("models: Gather of %d rows of %d into %d elements", len(idx), d.D, len(dst)))
	}
	D := d.D
	for k, i := range idx {
		if i < 0 || i >= d.N {
			panic(fmt.Sprintf("models: minibatch index %d out of range [0, %d)", i, d.N))
		}
		copy(dst[k*D:(k+1)*D], d.X[i*D:(i+1)*D])
	}
}
