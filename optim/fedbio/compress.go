package fedbio

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"hgpsim/compress"
	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// topkClient is a client's Top-k compressor with error feedback; its
// message is [indices; values].
type topkClient struct {
	fb  *compress.Feedback
	idx []int
	val []float64
	msg []float64
}

func newTopkClient(d, k int) (*topkClient, error) {
	top, err := compress.NewTopK(k)
	if err != nil {
		return nil, fmt.Errorf("comm-fedbio: %w", err)
	}
	return &topkClient{fb: compress.NewFeedback(d, top)}, nil
}

// message compresses a (+ the accumulated error) into [indices; values].
func (t *topkClient) message(a []float64) []float64 {
	t.idx, t.val = t.fb.Step(a, t.idx, t.val)
	t.msg = t.msg[:0]
	for _, i := range t.idx {
		t.msg = append(t.msg, float64(i))
	}
	t.msg = append(t.msg, t.val...)
	return t.msg
}

// compressSketch is the Count-Sketch of Iter-sketch, shared by the server
// and the clients through the seed; the server keeps its error as a sketch.
type compressSketch struct {
	cs     *compress.CountSketch
	k      int
	alpha  float64
	buf    []float64
	errTab []float64
	idx    []int
	val    []float64
}

func newCompressSketch(d int, h *hyperPlan) *compressSketch {
	cs, err := compress.NewCountSketch(d, h.rows, h.cols, h.seed)
	if err != nil {
		panic(err) // sizes are >= 1 by construction
	}
	return &compressSketch{cs: cs, k: h.k, alpha: h.alpha, buf: make([]float64, cs.Size()), errTab: make([]float64, cs.Size())}
}

// table returns S(x) (the client's message).
func (c *compressSketch) table(x []float64) []float64 {
	clear(c.buf)
	c.cs.Add(c.buf, 1, x)
	return c.buf
}

func (c *compressSketch) reset() { clear(c.errTab) }

// unsketch is lines 7, 8 and 10 of Alg. 2: T = αS_G + S(e),
// Δ = U(T) (the top-k heavy hitters, written dense into delta) and
// S(e) ← T − S(Δ).
func (c *compressSketch) unsketch(delta []float64, got []optim.Message, sizes []float64, total float64) {
	copy(c.buf, c.errTab)
	for _, m := range got {
		if len(m.Vec) != len(c.buf) {
			continue
		}
		w := c.alpha * sizes[m.From] / total
		for k, v := range m.Vec {
			c.buf[k] += w * v
		}
	}
	c.idx, c.val = c.cs.HeavyHitters(c.buf, c.k, c.idx, c.val)
	clear(delta)
	for n, i := range c.idx {
		delta[i] = c.val[n]
	}
	copy(c.errTab, c.buf)
	c.cs.AddSparse(c.errTab, -1, c.idx, c.val)
}

// nonIterClient computes A_m = S₂H_mS₁ᵀ with r1 HVPs.
type nonIterClient struct {
	s1, s2 *compress.SparseEmbedding
	u, hu  []float64
	col    []float64
	a      []float64 // r2×r1, row-major
}

func nonIterSketches(d int, h *hyperPlan) (s1, s2 *compress.SparseEmbedding) {
	s1, err := compress.NewSparseEmbedding(h.r1, d, rng.Mix(h.seed^1))
	if err != nil {
		panic(err) // sizes are >= 1 by construction
	}
	s2, err = compress.NewSparseEmbedding(h.r2, d, rng.Mix(h.seed^2))
	if err != nil {
		panic(err)
	}
	return s1, s2
}

func newNonIterClient(d int, h *hyperPlan) *nonIterClient {
	s1, s2 := nonIterSketches(d, h)
	return &nonIterClient{s1: s1, s2: s2, u: make([]float64, d), hu: make([]float64, d),
		col: make([]float64, h.r2), a: make([]float64, h.r1*h.r2)}
}

func (c *nonIterClient) sketchHessian(loss *models.SampleWeighted[float64], x, lambda []float64, data *datasets.Dataset, idx []int) []float64 {
	return SketchedHessian(c.a, c.s1, c.s2, func(dst, u []float64) { loss.HVP(dst, x, lambda, data, idx, u) }, c.u, c.hu, c.col)
}

// SketchedHessian writes A = S₂HS₁ᵀ (r2×r1, row-major) into a from r1
// products hvp(dst, u) = H·u, with scratch u, hu (length d) and col
// (length r2).
func SketchedHessian(a []float64, s1, s2 *compress.SparseEmbedding, hvp func(dst, u []float64), u, hu, col []float64) []float64 {
	r1, r2 := s1.Rows(), s2.Rows()
	for k := range r1 {
		s1.Column(u, k)
		hvp(hu, u)
		s2.Apply(col, hu)
		for i := range r2 {
			a[i*r1+k] = col[i]
		}
	}
	return a
}

// nonIterServer averages the clients' A_m and solves the sketched system.
type nonIterServer struct {
	s1, s2 *compress.SparseEmbedding
	a, b   []float64
}

func newNonIterServer(d int, h *hyperPlan) *nonIterServer {
	s1, s2 := nonIterSketches(d, h)
	return &nonIterServer{s1: s1, s2: s2, a: make([]float64, h.r1*h.r2), b: make([]float64, h.r2)}
}

func (s *nonIterServer) solve(got []optim.Message, sizes []float64, total float64, gradF []float64) ([]float64, error) {
	clear(s.a)
	for _, m := range got {
		if len(m.Vec) != len(s.a) {
			continue
		}
		w := sizes[m.From] / total
		for k, v := range m.Vec {
			s.a[k] += w * v
		}
	}
	s.s2.Apply(s.b, gradF)
	return SketchedSolve(s.a, s.b, s.s1.Rows())
}

// SketchedSolve returns the minimum-norm ω̂ = argmin ‖Aω − b‖ for A
// (len(b)×r1, row-major), by a thin SVD truncated at the numerical rank
// (A is rank-deficient whenever a row of S₁ is empty or r1 > d).
func SketchedSolve(a, b []float64, r1 int) ([]float64, error) {
	r2 := len(b)
	if r1 < 1 || len(a) != r1*r2 {
		return nil, fmt.Errorf("comm-fedbio: sketched system of %d entries is not %d×%d", len(a), r2, r1)
	}
	A := mat.NewDense(r2, r1, append([]float64(nil), a...))
	var svd mat.SVD
	if !svd.Factorize(A, mat.SVDThin) {
		return nil, fmt.Errorf("comm-fedbio: the SVD of the sketched Hessian S₂HS₁ᵀ (%d×%d) did not converge", r2, r1)
	}
	sv := svd.Values(nil)
	rank := 0
	if len(sv) > 0 && sv[0] > 0 {
		tol := sv[0] * float64(max(r1, r2)) * 0x1p-52
		for _, v := range sv {
			if v > tol {
				rank++
			}
		}
	}
	if rank == 0 {
		return make([]float64, r1), nil // A = 0: ω̂ = 0
	}
	var w mat.VecDense
	svd.SolveVecTo(&w, mat.NewVecDense(r2, append([]float64(nil), b...)), rank)
	out := w.RawVector().Data
	if !optim.AllFinite(out) {
		return nil, fmt.Errorf("%w: the solution of the sketched system", optim.ErrNonFinite)
	}
	return out, nil
}
