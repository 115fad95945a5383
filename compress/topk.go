package compress

import "fmt"

// TopK keeps the k coordinates of largest magnitude of a vector: the local
// Top-k compressor of Comm-FedBiO's Iter-topK. Its scratch is reused from
// call to call; it carries no other state (error feedback is the caller's,
// see Feedback).
type TopK struct {
	k       int
	scratch []float64
}

// NewTopK returns a Top-k compressor. It returns an error unless k >= 1.
func NewTopK(k int) (*TopK, error) {
	if k < 1 {
		return nil, fmt.Errorf("compress: top-k needs k >= 1, got %d", k)
	}
	return &TopK{k: k}, nil
}

// K returns k.
func (t *TopK) K() int { return t.k }

// Compress writes the indices (ascending) and values of the min(k, len(x))
// coordinates of x of largest magnitude into idx and val (reused, returned).
// Ties go to the lower index, so the choice is deterministic.
func (t *TopK) Compress(x []float64, idx []int, val []float64) ([]int, []float64) {
	idx, t.scratch = topIndices(x, t.k, idx, t.scratch)
	val = val[:0]
	for _, i := range idx {
		val = append(val, x[i])
	}
	return idx, val
}

// Feedback is client-side error feedback around a compressor: it sends
// C(a + e) and keeps e ← a + e − C(a + e), the part the message could not
// carry, for the next call. Reset clears e (Comm-FedBiO's clients are
// stateless across hyper-gradient calls, so e lives for one call of
// Alg. 2 only).
type Feedback struct {
	e, buf []float64
	top    *TopK
}

// NewFeedback returns error feedback of dimension d around top.
func NewFeedback(d int, top *TopK) *Feedback {
	return &Feedback{e: make([]float64, d), buf: make([]float64, d), top: top}
}

// Reset sets the accumulated error to 0.
func (f *Feedback) Reset() { clear(f.e) }

// Error returns the accumulated error e (read-only view).
func (f *Feedback) Error() []float64 { return f.e }

// SetError sets the accumulated error to a copy of e (a saved Error, for a
// checkpointed run); e must have the feedback's dimension.
func (f *Feedback) SetError(e []float64) error {
	if len(e) != len(f.e) {
		return fmt.Errorf("compress: an error-feedback vector of length %d for dimension %d", len(e), len(f.e))
	}
	copy(f.e, e)
	return nil
}

// Step compresses a + e, writes the kept coordinates into idx and val and
// updates e. len(a) must be the feedback's dimension.
func (f *Feedback) Step(a []float64, idx []int, val []float64) ([]int, []float64) {
	for i := range f.buf {
		f.buf[i] = a[i] + f.e[i]
	}
	idx, val = f.top.Compress(f.buf, idx, val)
	copy(f.e, f.buf)
	for _, i := range idx {
		f.e[i] = 0
	}
	return idx, val
}
