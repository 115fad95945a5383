package optim

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"hgpsim/compress"
	"hgpsim/internal/rng"
	"hgpsim/models"
)

func init() {
	Algorithms.Register("comm-fedbio",
		"Comm-FedBiO (Li, Pei, Huang, KDD'22, Alg. 1): sample weights λ_j ∈ [0, 1] of the clients' noisy training samples tuned so that the FedAvg model fits the server's clean validation set. Per round: S sampled clients take T local steps on the λ-weighted loss, the server averages, estimates the hyper-gradient — iterative (Alg. 2: gradient descent on ½vᵀHv − vᵀ∇F, one HVP per client per iteration, uploads uncompressed, Top-k with client error feedback or Count-Sketch with server error feedback) or non-iterative (Alg. 3: A_m = S₂H_mS₁ᵀ from r₁ HVPs, least squares at the server) — and each client updates its own λ ← clip(λ − ηĝ, 0, 1). Needs data kind noisy-labels (the server's validation set is node 0's).",
		func() Algorithm {
			return &CommFedBiO{FedBioTraining: defaultFedBioTraining(), Hypergradient: "iterative", Compressor: "topk",
				Compression: 20, Iterations: 5, Alpha: 0.1, SketchRows: 5, Ratio: 0, HVPBatch: 64, OuterLR: 0.1,
				Scale: "per-sample"}
		})
}

// CommFedBiO is Alg. 1 of the Comm-FedBiO paper with its two
// hyper-gradient subroutines.
type CommFedBiO struct {
	FedBioTraining `yaml:",inline"`
	Hypergradient  string  `yaml:"hypergradient" doc:"iterative (Alg. 2), non-iterative (Alg. 3), or none: λ ≡ 1, plain FedAvg on the noisy labels in the same loop (the FedAvg baseline)"`
	Compressor     string  `yaml:"compressor" doc:"iterative: none, topk (client-side error feedback) or sketch (Count-Sketch, server-side error feedback)"`
	Compression    float64 `yaml:"compression" doc:"rate R >= 1: a hyper-gradient upload carries about d/R numbers (top-k: k = d/R values plus their k indices; sketch: rows·cols = d/R; non-iterative: r1·r2 = d/R); ignored for compressor none"`
	Iterations     int     `yaml:"iterations" doc:"iterative: I, 2 … 1000; the first step from v⁰ = 0 is v¹ = α∇F without communication, so a call has I − 1 exchanges"`
	Alpha          float64 `yaml:"alpha" doc:"iterative: step size α of the gradient descent on q(v), finite, > 0, below 2/L of the inner Hessian"`
	SketchRows     int     `yaml:"sketch_rows" doc:"sketch: rows r of the Count-Sketch, 1 … 100 (columns c = d/(R·r)); the server recovers k = r·c/ln d heavy hitters"`
	Ratio          float64 `yaml:"ratio" doc:"non-iterative: 0 sizes the sketches as Remark 2 (r2 ≈ r1²: r1 = ⌊(d/R)^⅓⌋, r2 = ⌊d/(R·r1)⌋); a ratio >= 1 sets r2/r1 instead (r1 = ⌊√(d/(R·ratio))⌋)"`
	HVPBatch       int     `yaml:"hvp_batch" doc:"rows of a client's data its Hessian-vector products of one call use (drawn once per call), 0 (all) … 1048576"`
	OuterLR        float64 `yaml:"outer_lr" doc:"hyper step η of λ ← clip(λ − ηĝ, 0, 1), finite, >= 0 (the paper: 0.1)"`
	Scale          string  `yaml:"scale" doc:"per-sample: ĝ_j = −⟨∇ℓ(ω; s_j), v⟩, the exact ∂h/∂λ_j times N (a step η per sample, as a per-sample learning rate); exact: ĝ_j = −(1/N)⟨∇ℓ(ω; s_j), v⟩, which with N = 5,000 moves λ by about η/N per round"`
}

// Server implements Algorithm.
func (*CommFedBiO) Server() bool { return true }

// Validate implements Algorithm.
func (a *CommFedBiO) Validate(n int) error {
	if err := a.FedBioTraining.validate(n); err != nil {
		return err
	}
	switch {
	case a.Hypergradient != "iterative" && a.Hypergradient != "non-iterative" && a.Hypergradient != "none":
		return fmt.Errorf("hypergradient must be iterative, non-iterative or none, got %q", a.Hypergradient)
	case a.Hypergradient == "iterative" && a.Compressor != "none" && a.Compressor != "topk" && a.Compressor != "sketch":
		return fmt.Errorf("compressor must be none, topk or sketch, got %q", a.Compressor)
	case !(a.Compression >= 1) || math.IsInf(a.Compression, 0):
		return fmt.Errorf("compression must be a finite number >= 1, got %v", a.Compression)
	case a.Iterations < 2 || a.Iterations > 1000:
		return fmt.Errorf("iterations must be in [2, 1000], got %d", a.Iterations)
	case !(a.Alpha > 0) || math.IsInf(a.Alpha, 0):
		return fmt.Errorf("alpha must be a finite number > 0, got %v", a.Alpha)
	case a.SketchRows < 1 || a.SketchRows > 100:
		return fmt.Errorf("sketch_rows must be in [1, 100], got %d", a.SketchRows)
	case !(a.Ratio == 0 || a.Ratio >= 1) || math.IsInf(a.Ratio, 0):
		return fmt.Errorf("ratio must be 0 (Remark 2) or a finite number >= 1, got %v", a.Ratio)
	case a.HVPBatch < 0 || a.HVPBatch > 1<<20:
		return fmt.Errorf("hvp_batch must be in [0, 1048576], got %d", a.HVPBatch)
	case !(a.OuterLR >= 0) || math.IsInf(a.OuterLR, 0):
		return fmt.Errorf("outer_lr must be a finite number >= 0, got %v", a.OuterLR)
	case a.Scale != "per-sample" && a.Scale != "exact":
		return fmt.Errorf("scale must be per-sample or exact, got %q", a.Scale)
	}
	return nil
}

// Sizes returns the compressed sizes for dimension d: k (top-k values or
// sketch heavy hitters), the sketch's rows and columns, and r1, r2.
func (a *CommFedBiO) Sizes(d int) (k, rows, cols, r1, r2 int) {
	budget := max(1, int(math.Round(float64(d)/a.Compression)))
	k = budget
	rows = min(a.SketchRows, budget)
	cols = max(1, budget/rows)
	if a.Compressor == "sketch" {
		k = max(1, int(math.Round(float64(rows*cols)/math.Log(float64(max(d, 3))))))
	}
	if a.Ratio == 0 {
		r1 = max(1, int(math.Cbrt(float64(budget))+1e-9))
	} else {
		r1 = max(1, int(math.Sqrt(float64(budget)/a.Ratio)))
	}
	r2 = max(r1, budget/r1)
	return
}

// Plan implements Algorithm.
func (a *CommFedBiO) Plan(s *Setup) (ClientFactory, Program, error) {
	d := s.Model.DimX()
	k, rows, cols, r1, r2 := a.Sizes(d)
	comp := a.Compressor
	if a.Hypergradient == "non-iterative" {
		comp = ""
	}
	h := &hyperPlan{iterative: a.Hypergradient == "iterative", compressor: comp, iters: a.Iterations,
		alpha: a.Alpha, k: k, rows: rows, cols: cols, r1: r1, r2: r2, hvpBatch: a.HVPBatch, eta: a.OuterLR,
		perSample: a.Scale == "per-sample", seed: rng.Key(s.Seed, uint64(rng.PurposeSketch))}
	p := &fedBioPlan{train: a.FedBioTraining, mode: lambdaLearned, hyper: h}
	if a.Hypergradient == "none" {
		p.hyper = nil
	}
	return p.build(s)
}

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
func (c *compressSketch) unsketch(delta []float64, got []Message, sizes []float64, total float64) {
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

func (c *nonIterClient) sketchHessian(loss *models.SampleWeighted, x, lambda []float64, data *models.Dataset, idx []int) []float64 {
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

func (s *nonIterServer) solve(got []Message, sizes []float64, total float64, gradF []float64) ([]float64, error) {
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
	if !AllFinite(out) {
		return nil, fmt.Errorf("%w: the solution of the sketched system", ErrNonFinite)
	}
	return out, nil
}
