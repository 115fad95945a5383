package experiments

import (
	"context"
	"fmt"
	"math"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/scenarios"
)

func init() {
	scenarios.Experiments.Register("hgp-error",
		"The PDBO paper's App. C.6 / Fig. 2: the error of VR-HGP against the number of rounds m, per (alpha, beta) pair, against the dense fixed-point oracle linearized at the same state, over many seeds and networks (logistic regression with label weights on a one-dimensional two-class data set). Writes error.csv, error.png and summary.json.",
		func() scenarios.Experiment {
			return &HGPError{Networks: []string{"stochastic-undirected", "stochastic-directed"},
				Pairs: [][2]float64{{1, 0}, {0.9, 0.1}}, Seeds: 10, M: 500, Linearize: "last", Sampling: "alternate",
				LR: 0.5, Classes: [2]int{0, 1}, Train: 100, Val: 100, Test: 1}
		})
}

// HGPError is the error-against-depth experiment of the PDBO paper's
// App. C.6 (Fig. 2): n clients, binary logistic regression with label
// weights λ ∈ R² on a one-dimensional two-class data set, full batches,
// T rounds of SGP (Eq. 4b), then M iterations of VR-HGP per (α, β) with the
// true p̄ and δ̄, compared with the dense fixed-point oracle linearized at
// the same state. All pairs of one (network, seed) run in lockstep over the
// same edge realizations (common random numbers), so pairs are compared
// seed by seed. A seed whose oracle does not exist is recorded, not fatal.
type HGPError struct {
	Networks  []string     `yaml:"networks" doc:"network kinds, one panel each; the scenario's network parameters apply to its own kind, the defaults to the others"`
	Pairs     [][2]float64 `yaml:"pairs" doc:"(alpha, beta) pairs in [0, 1]², one curve each; (1, 0) is HGP"`
	Seeds     int          `yaml:"seeds" doc:"seeds seed … seed + seeds − 1, 1 … 10000"`
	M         int          `yaml:"m" doc:"VR-HGP iterations, 1 … 100000"`
	Linearize string       `yaml:"linearize" doc:"last (the last SGP iterate, as Alg. 1) or fixed-point (y* of the expected SGP map)"`
	Sampling  string       `yaml:"sampling" doc:"alternate (Eq. 9, 2M rounds) or simultaneous (M rounds); both unbiased"`
	LR        float64      `yaml:"lr" doc:"constant SGP step, also the step of the linearized map, finite, > 0"`
	Classes   [2]int       `yaml:"classes" doc:"real data: the two classes whose mean pixel is the feature"`
	// OracleGap also builds the oracle at the other linearization point and
	// reports ‖oracle at y⁽ᵀ⁾ − oracle at y*‖ and the final error against it
	// (costs the expected fixed point and a second oracle per seed).
	OracleGap bool `yaml:"oracle_gap" doc:"also report the gap between the oracles at the last iterate and at the fixed point, and the final error against the other oracle"`
	// Real data: examples per client in each split (synthetic data takes
	// them from the data section).
	Train int `yaml:"train" doc:"real data: training examples per client"`
	Val   int `yaml:"val" doc:"real data: validation examples per client (F_i is the validation loss)"`
	Test  int `yaml:"test" doc:"real data: test examples per client"`
}

// Bounds of the experiment's sizes.
const (
	maxSeeds = 10000
	maxM     = 100000
)

// Validate implements scenarios.Experiment.
func (h *HGPError) Validate(sc *scenarios.Scenario) error {
	if err := h.validate(); err != nil {
		return err
	}
	if _, ok := sc.Data.Source.Params.(*datasets.SyntheticData); !ok {
		switch sc.Data.Source.Name {
		case "fashion-mnist", "mnist":
		default:
			return fmt.Errorf("data: hgp-error takes synthetic, fashion-mnist or mnist data, got %s", sc.Data.Source.Name)
		}
		for _, v := range []int{h.Train, h.Val, h.Test} {
			if v < 1 || v > datasets.MaxExamplesPerClient {
				return fmt.Errorf("train, val, test: examples per client must be in [1, %d], got %d, %d, %d", datasets.MaxExamplesPerClient, h.Train, h.Val, h.Test)
			}
		}
	}
	return nil
}

// Estimate implements scenarios.Experiment: small networks, each run many
// times; the dense oracles are (2n)² with d_x = 2.
func (h *HGPError) Estimate(sc *scenarios.Scenario) scenarios.Resources {
	n := float64(sc.Clients)
	m := 2 * n
	r := scenarios.Resources{Live: []scenarios.ResourcePart{{Name: "network", Bytes: int64(40 * n * n)},
		{Name: "dense oracles", Bytes: int64(2 * 3 * 8 * m * m)}}}
	if _, ok := sc.Data.Source.Params.(*datasets.SyntheticData); !ok {
		r.Live = append(r.Live, scenarios.ResourcePart{Name: "data", Bytes: 70000 * 785 * 8})
	}
	r.PeakBytes = 2 * r.LiveBytes()
	per := float64(sc.SGP.Rounds)*n*n*8 + float64(len(h.Pairs))*float64(h.M)*2*n*n*8 + 2*m*m*m
	r.Flops = float64(h.Seeds) * float64(len(h.Networks)) * per
	r.Seconds = r.Flops / scenarios.AssumedFlops
	return r
}

func (h *HGPError) validate() error {
	if len(h.Networks) == 0 {
		return fmt.Errorf("networks: list at least one network kind")
	}
	for _, k := range h.Networks {
		if !graph.Topologies.Has(k) {
			return fmt.Errorf("networks: %q is not a network kind (registered: %v)", k, graph.Topologies.Kinds())
		}
	}
	if len(h.Pairs) == 0 {
		return fmt.Errorf("pairs: list at least one (alpha, beta) pair")
	}
	for _, p := range h.Pairs {
		if !(p[0] >= 0 && p[0] <= 1 && p[1] >= 0 && p[1] <= 1) {
			return fmt.Errorf("pairs: alpha and beta must be in [0, 1], got %v", p)
		}
	}
	if h.Seeds < 1 || h.Seeds > maxSeeds {
		return fmt.Errorf("seeds: must be in [1, %d], got %d", maxSeeds, h.Seeds)
	}
	if h.M < 1 || h.M > maxM {
		return fmt.Errorf("m: must be in [1, %d], got %d", maxM, h.M)
	}
	if h.Linearize != "last" && h.Linearize != "fixed-point" {
		return fmt.Errorf("linearize: must be last or fixed-point, got %q", h.Linearize)
	}
	if h.Sampling != "alternate" && h.Sampling != "simultaneous" {
		return fmt.Errorf("sampling: must be alternate or simultaneous, got %q", h.Sampling)
	}
	if h.Classes[0] == h.Classes[1] || h.Classes[0] < 0 || h.Classes[1] < 0 {
		return fmt.Errorf("classes: two different non-negative class labels, got %v", h.Classes)
	}
	if !(h.LR > 0) || math.IsInf(h.LR, 0) {
		return fmt.Errorf("lr: must be a finite number > 0, got %v", h.LR)
	}
	return nil
}

// hgpErrorSeed is the outcome of one (network, seed).
type hgpErrorSeed struct {
	seed   uint64
	errors [][]float64   // [pair][m], m = 0..M; nil when skipped
	skip   *HGPErrorSkip // no oracle at the chosen linearization
	norm   float64       // ‖oracle‖
	gap    float64       // valid when gapErr == nil and the gap was asked for
	gapErr *HGPErrorSkip // the other oracle (or this one) does not exist
	other  []float64     // [pair] error at m = M against the other oracle; nil without it
}

// hgpErrorRun holds seeds[network][seed index].
type hgpErrorRun struct {
	spec  HGPError
	seeds [][]hgpErrorSeed
}

// curves returns errors[m] of pair pi on network ni for the seeds that have
// an oracle, in seed order.
func (r *hgpErrorRun) curves(ni, pi int) [][]float64 {
	var out [][]float64
	for _, s := range r.seeds[ni] {
		if s.skip == nil {
			out = append(out, s.errors[pi])
		}
	}
	return out
}

// Run implements scenarios.Experiment.
func (hp *HGPError) Run(ctx context.Context, sc scenarios.Scenario, env scenarios.Env) (any, error) {
	h := *hp
	res := &hgpErrorRun{spec: h, seeds: make([][]hgpErrorSeed, len(h.Networks))}
	for ni, kind := range h.Networks {
		for s := 0; s < h.Seeds; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seed := sc.Seed + uint64(s)
			one, err := hgpErrorOne(ctx, sc, &h, env, kind, seed, nil)
			if err != nil {
				return nil, fmt.Errorf("network %s, seed %d: %w", kind, seed, err)
			}
			res.seeds[ni] = append(res.seeds[ni], one)
			env.Progress("hgp-error/"+kind, s, h.Seeds)
		}
	}
	csv, err := res.csv()
	if err != nil {
		return nil, err
	}
	if err := env.WriteFile("error.csv", csv); err != nil {
		return nil, err
	}
	png, err := res.plot()
	if err != nil {
		return nil, err
	}
	if err := env.WriteFile("error.png", png); err != nil {
		return nil, err
	}
	sum := res.summary(sc)
	if err := writeSummary(env, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// stackedGap is ‖a − b‖ over the stacked per-client vectors.
func stackedGap(a, b [][]float64) float64 {
	s := 0.0
	for i := range a {
		for k, v := range a[i] {
			s += (v - b[i][k]) * (v - b[i][k])
		}
	}
	return math.Sqrt(s)
}
