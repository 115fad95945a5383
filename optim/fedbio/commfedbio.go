package fedbio

import (
	"fmt"
	"math"

	"hgpsim/internal/rng"
	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("comm-fedbio",
		"Comm-FedBiO (Li, Pei, Huang, KDD'22, Alg. 1): sample weights λ_j ∈ [0, 1] of the clients' noisy training samples tuned so that the FedAvg model fits the server's clean validation set. Per round: S sampled clients take T local steps on the λ-weighted loss, the server averages, estimates the hyper-gradient — iterative (Alg. 2: gradient descent on ½vᵀHv − vᵀ∇F, one HVP per client per iteration, uploads uncompressed, Top-k with client error feedback or Count-Sketch with server error feedback) or non-iterative (Alg. 3: A_m = S₂H_mS₁ᵀ from r₁ HVPs, least squares at the server) — and each client updates its own λ ← clip(λ − ηĝ, 0, 1). Needs data kind noisy-labels (the server's validation set is node 0's). rounds are the outer iterations K of Alg. 1; participation is S/M, also the clients of each hyper-gradient call; the defaults are the paper's T = 5 local steps, γ = 0.01 and batch 256.",
		func() optim.Algorithm {
			return &CommFedBiO{FederatedTraining: defaultTraining(), Hypergradient: "iterative", Compressor: "topk",
				Compression: 20, Iterations: 5, Alpha: 0.1, SketchRows: 5, Ratio: 0, HVPBatch: 64, OuterLR: 0.1,
				Scale: "per-sample"}
		})
}

// CommFedBiO is Alg. 1 of the Comm-FedBiO paper with its two
// hyper-gradient subroutines.
type CommFedBiO struct {
	optim.FederatedTraining `yaml:",inline"`
	Hypergradient           string  `yaml:"hypergradient" doc:"iterative (Alg. 2), non-iterative (Alg. 3), or none: λ ≡ 1, plain FedAvg on the noisy labels in the same loop (the FedAvg baseline)"`
	Compressor              string  `yaml:"compressor" doc:"iterative: none, topk (client-side error feedback) or sketch (Count-Sketch, server-side error feedback)"`
	Compression             float64 `yaml:"compression" doc:"rate R >= 1: a hyper-gradient upload carries about d/R numbers (top-k: k = d/R values plus their k indices; sketch: rows·cols = d/R; non-iterative: r1·r2 = d/R); ignored for compressor none"`
	Iterations              int     `yaml:"iterations" doc:"iterative: I, 2 … 1000; the first step from v⁰ = 0 is v¹ = α∇F without communication, so a call has I − 1 exchanges"`
	Alpha                   float64 `yaml:"alpha" doc:"iterative: step size α of the gradient descent on q(v), finite, > 0, below 2/L of the inner Hessian"`
	SketchRows              int     `yaml:"sketch_rows" doc:"sketch: rows r of the Count-Sketch, 1 … 100 (columns c = d/(R·r)); the server recovers k = r·c/ln d heavy hitters"`
	Ratio                   float64 `yaml:"ratio" doc:"non-iterative: 0 sizes the sketches as Remark 2 (r2 ≈ r1²: r1 = ⌊(d/R)^⅓⌋, r2 = ⌊d/(R·r1)⌋); a ratio >= 1 sets r2/r1 instead (r1 = ⌊√(d/(R·ratio))⌋)"`
	HVPBatch                int     `yaml:"hvp_batch" doc:"rows of a client's data its Hessian-vector products of one call use (drawn once per call), 0 (all) … 1048576"`
	OuterLR                 float64 `yaml:"outer_lr" doc:"hyper step η of λ ← clip(λ − ηĝ, 0, 1), finite, >= 0 (the paper: 0.1)"`
	Scale                   string  `yaml:"scale" doc:"per-sample: ĝ_j = −⟨∇ℓ(ω; s_j), v⟩, the exact ∂h/∂λ_j times N (a step η per sample, as a per-sample learning rate); exact: ĝ_j = −(1/N)⟨∇ℓ(ω; s_j), v⟩, which with N = 5,000 moves λ by about η/N per round"`
}

// Validate implements Algorithm.
func (a *CommFedBiO) Validate(n int) error {
	if err := a.FederatedTraining.Validate(n); err != nil {
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
func (a *CommFedBiO) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	d := s.Model.DimX()
	k, rows, cols, r1, r2 := a.Sizes(d)
	comp := a.Compressor
	if a.Hypergradient == "non-iterative" {
		comp = ""
	}
	h := &hyperPlan{iterative: a.Hypergradient == "iterative", compressor: comp, iters: a.Iterations,
		alpha: a.Alpha, k: k, rows: rows, cols: cols, r1: r1, r2: r2, hvpBatch: a.HVPBatch, eta: a.OuterLR,
		perSample: a.Scale == "per-sample", seed: rng.Key(s.Seed, uint64(rng.PurposeSketch))}
	p := &plan{train: a.FederatedTraining, mode: lambdaLearned, hyper: h}
	if a.Hypergradient == "none" {
		p.hyper = nil
	}
	return p.build(s)
}
