package models

import "hgpsim/datasets"

// Linearizer is implemented by bilevel models whose second-order products
// at a fixed (x, λ, batch) can share work. Hyper-gradient estimators apply
// the Hessian-vector product and the cross product to the same vector, and
// to many vectors at the same point (every round of HGP at full batch):
// Products computes both from one forward and one R-pass per row, and a
// Linearized keeps the forward pass across calls where the model allows.
type Linearizer[F Float] interface {
	Bilevel[F]
	// Linearize fixes the point of the products. x, λ, d and idx are
	// kept, not copied: they must not change while the Linearized is in
	// use. It shares the model's scratch and buffers, so it belongs to the
	// goroutine that owns the model, and the next Linearize of the same
	// model invalidates it (which lets a per-round minibatch reuse the
	// buffers); other calls on the model in between are fine.
	Linearize(x []F, lambda []float64, d *datasets.Dataset, idx []int) Linearized[F]
}

// Linearized applies a model's second-order products at a fixed point.
type Linearized[F Float] interface {
	// Products writes (∂ₓ∇ₓf)·u into hv (d_x) and (∂_λ∇ₓf)ᵀu into cross
	// (d_λ); a nil destination is skipped. The values are bit-identical to
	// InnerHVP and InnerCross at the fixed point.
	Products(hv []F, cross []float64, u []F)
	// Release drops the references to the fixed point (x, λ, the data),
	// which the model would otherwise keep alive until its next
	// Linearize; the Linearized must not be used after it.
	Release()
}

// maxCachedFloats bounds the forward cache of one Linearized (8 MiB); a
// larger batch recomputes its forward pass on every call instead.
const maxCachedFloats = 1 << 20

// statelessRows marks classifiers whose batchJVP, batchVJP and batchVJPR
// may need nothing of batchLogits but the rows themselves (linear logits),
// so that a mixture of them can replay a cached forward pass: linearRows
// reports whether this one does, and bindRows then records the rows
// without computing the logits.
type statelessRows[F Float] interface {
	linearRows() bool
	bindRows(A []F, n int)
}

// bindsRows reports whether c can replay its forward pass from the rows.
func bindsRows[F Float](c Classifier[F]) bool {
	s, ok := c.(statelessRows[F])
	return ok && s.linearRows()
}

// forwardCache keeps, per batch row, what mixture.forward computes: the
// probabilities q (K×C), log p_k(y) and responsibilities r (K each).
type forwardCache[F Float] struct {
	filled bool
	kc, k  int
	q      []F       // rows × K×C
	logp   []float64 // rows × K
	r      []float64 // rows × K
}

// store copies the forward pass of the chunk's nb rows, the first of
// which is batch row lo, into the cache.
func (c *forwardCache[F]) store(m *mixture[F], lo, nb int) {
	C := m.classes
	for b := range nb {
		row := lo + b
		for kb, q := range m.q {
			copy(c.q[row*c.kc+kb*C:row*c.kc+(kb+1)*C], rowOf(q, b, C))
		}
	}
	copy(c.logp[lo*c.k:], m.logp[:nb*c.k])
	copy(c.r[lo*c.k:], m.r[:nb*c.k])
}

// load is the inverse of store.
func (c *forwardCache[F]) load(m *mixture[F], lo, nb int) {
	C := m.classes
	for b := range nb {
		row := lo + b
		for kb, q := range m.q {
			copy(rowOf(q, b, C), c.q[row*c.kc+kb*C:row*c.kc+(kb+1)*C])
		}
	}
	copy(m.logp[:nb*c.k], c.logp[lo*c.k:])
	copy(m.r[:nb*c.k], c.r[lo*c.k:])
}

// mixtureLinearized is the Linearized of a mixture.
type mixtureLinearized[F Float] struct {
	m      *mixture[F]
	x      []F
	lambda []float64
	d      *datasets.Dataset
	idx    []int
	cache  *forwardCache[F] // nil: recompute the forward pass every call
	spare  forwardCache[F]  // the buffers cache points to, kept across Linearize
}

var (
	_ Linearizer[float64] = (*mixture[float64])(nil)
	_ Linearizer[float32] = (*mixture[float32])(nil)
)

// Linearize implements Linearizer. The forward pass is cached when every
// base has linear logits and the batch is small enough.
func (m *mixture[F]) Linearize(x []F, lambda []float64, d *datasets.Dataset, idx []int) Linearized[F] {
	l := &m.lin
	*l = mixtureLinearized[F]{m: m, x: x, lambda: lambda, d: d, idx: idx, spare: l.spare}
	for _, b := range m.bases {
		if !bindsRows(b) {
			return l
		}
	}
	n := batchSize(d, idx)
	K, C := len(m.bases), m.classes
	if n*K*(C+2) > maxCachedFloats {
		return l
	}
	c := &l.spare
	c.filled, c.kc, c.k = false, K*C, K
	c.q = resize(c.q, n*K*C)
	c.logp = resize(c.logp, n*K)
	c.r = resize(c.r, n*K)
	l.cache = c
	return l
}

func (l *mixtureLinearized[F]) Products(hv []F, cross []float64, u []F) {
	if hv != nil {
		checkLen("hv", hv, l.m.DimX())
	}
	if cross != nil {
		checkLen("cross", cross, l.m.DimLambda())
	}
	l.m.hold()
	defer l.m.unhold()
	l.m.products(hv, cross, l.x, l.lambda, l.d, l.idx, u, l.cache)
}

func (l *mixtureLinearized[F]) Release() {
	l.x, l.lambda, l.d, l.idx, l.cache = nil, nil, nil, nil, nil
}
