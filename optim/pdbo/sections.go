package pdbo

import (
	"fmt"
	"math"
	"strings"

	"hgpsim/datasets"
	"hgpsim/optim"
)

// The pdbo algorithm takes its parameters from three top-level sections of
// a scenario — sgp, hypergradient and outer — rather than from keys under
// `algorithm:`, because the method presets of the PDBO paper fill them in.
// Their types live here, with the family they configure; the scenario
// embeds them, and the algorithm reads them back through optim.Sections.

// Bounds of the sizes the sections can name. A scenario's resource
// estimate bounds their products.
const (
	MaxRounds     = 10_000_000 // sgp.rounds
	MaxM          = 1_000_000  // hypergradient.m
	MaxOuterSteps = 100_000    // outer.steps
	MaxBatch      = datasets.MaxExamplesPerClient
)

// ExactEstimateLimit bounds the client count for which runs compare the
// Alg. 2 estimates with the truth: the exact p̄ costs O(n³) (18 s at
// n = 1000 on the project machine) and the delivery record O(n²) memory.
const ExactEstimateLimit = 400

// OuterSpec configures the outer loop of Alg. 1: each client updates its own
// λ_i from its hyper-gradient estimate.
type OuterSpec struct {
	Steps     int     `yaml:"steps"`     // S outer steps (0: a single inner run, no λ update)
	Optimizer string  `yaml:"optimizer"` // adam | sgd
	LR        float64 `yaml:"lr"`        // hyper-learning rate (all of λ, or λ^K for ensemble-label-weights)
	LRLabels  float64 `yaml:"lr_labels"` // ensemble-label-weights: rate of the label part λ^C
	Beta1     float64 `yaml:"beta1"`     // adam
	Beta2     float64 `yaml:"beta2"`     // adam
	Eps       float64 `yaml:"eps"`       // adam
	Restart   bool    `yaml:"restart"`   // each outer step restarts SGP from the initial parameters (else warm start)
	Patience  int     `yaml:"patience"`  // stop after this many outer steps without a better validation accuracy (0 = run all S)
}

// HypergradientSpec configures the hyper-gradient phase after SGP.
type HypergradientSpec struct {
	Estimator string  `yaml:"estimator"`  // none | auto | hgp | vr-hgp | exact | local
	Alpha     float64 `yaml:"alpha"`      // vr-hgp: α
	Beta      float64 `yaml:"beta"`       // vr-hgp: β
	M         int     `yaml:"m"`          // iterations
	Sampling  string  `yaml:"sampling"`   // simultaneous | alternate
	Batch     int     `yaml:"batch"`      // minibatch of Â, B̂; 0 = full batch
	OuterData string  `yaml:"outer_data"` // train | val: the data of F_i
	Estimates string  `yaml:"estimates"`  // counted (Alg. 2) | true (exact p̄, δ̄)
	LR        float64 `yaml:"lr"`         // step of the linearized SGP map; 0 = SGP's last step
	Oracle    bool    `yaml:"oracle"`     // also compute the dense fixed-point oracle and report the error
	EvalEvery int     `yaml:"eval_every"` // report every k rounds (and after the last); 0 = only the last
	// Direct is where VR-HGP puts the direct term ⟨c^λ⟩_i: "added" to the
	// estimate at the end (Sec. 4, App. B), or "damped": v starts at ⟨c^λ⟩_i
	// and is multiplied by α every v-update with the rest of v, so the
	// estimate carries α^M·⟨c^λ⟩_i (as the authors' released code does).
	Direct string `yaml:"direct"`
}

// SGPSpec configures the inner Stochastic Gradient Push phase.
type SGPSpec struct {
	Variant   string       `yaml:"variant"`    // after (Eq. 4b) | before (Eq. 4a)
	Rounds    int          `yaml:"rounds"`     // T
	Batch     int          `yaml:"batch"`      // minibatch size; 0 = full batch
	LR        ScheduleSpec `yaml:"lr"`         // learning rate α_t
	EvalEvery int          `yaml:"eval_every"` // evaluate every k rounds (and after the last)
	// WeightFloor is ε of the small-weight guard: the local step is scaled
	// by min(1, ω_i/ε) (GuardScale); 0 = off, the paper's SGP.
	WeightFloor float64 `yaml:"weight_floor"`
	// Isolated makes every client train alone over self-loops only: the
	// local baselines' method presets set it; a file cannot.
	Isolated bool `yaml:"-"`
}

// ScheduleSpec is a learning-rate schedule.
type ScheduleSpec struct {
	Schedule   string  `yaml:"schedule"`   // constant | multistep | inverse
	Base       float64 `yaml:"base"`       // α_0
	Milestones []int   `yaml:"milestones"` // multistep
	Gamma      float64 `yaml:"gamma"`      // multistep factor
	Decay      float64 `yaml:"decay"`      // inverse: α_0 / (1 + decay·t)^power
	Power      float64 `yaml:"power"`      // inverse
}

// DefaultSGP is the sgp section a scenario starts from: 600 rounds whose
// step is multiplied by 0.1 twice near the end (rounds 500 and 550), as
// the PDBO paper decays it.
func DefaultSGP() SGPSpec {
	return SGPSpec{Variant: "after", Rounds: 600, Batch: 32, EvalEvery: 50,
		LR: ScheduleSpec{Schedule: "multistep", Base: 0.05, Milestones: []int{500, 550}, Gamma: 0.1, Decay: 0.01, Power: 1}}
}

// DefaultHypergradient is the hypergradient section a scenario starts
// from: no estimator.
func DefaultHypergradient() HypergradientSpec {
	return HypergradientSpec{Estimator: "none", Alpha: 0.9, Beta: 0.1, M: 200, Sampling: "simultaneous",
		OuterData: "train", Estimates: "counted", EvalEvery: 0, Direct: "added"}
}

// DefaultOuter is the outer section a scenario starts from: no outer
// steps, Adam on λ from 0 when there are some.
func DefaultOuter() OuterSpec {
	return OuterSpec{Steps: 0, Optimizer: "adam", LR: 0.1, LRLabels: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Restart: true}
}

// Optim returns the learning-rate schedule.
func (s ScheduleSpec) Optim() optim.Schedule {
	return optim.Schedule{Kind: s.Schedule, Base: s.Base, Milestones: s.Milestones, Gamma: s.Gamma, Decay: s.Decay, Power: s.Power}
}

func nonNegative(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: must be a finite number >= 0, got %v", name, v)
	}
	return nil
}

// Validate checks the section for a model with the given head (a
// models.Heads kind). Errors name the key, not the section.
func (h *HypergradientSpec) Validate(head string) error {
	if h.Estimator == "none" {
		return nil
	}
	if !Estimators.Has(h.Estimator) {
		return fmt.Errorf("estimator: must be none, auto or an estimator kind (%s), got %q", strings.Join(Estimators.Kinds(), ", "), h.Estimator)
	}
	if head == "none" {
		return fmt.Errorf("estimator: %s needs hyperparameters; set model.head (label-weights, ensemble or ensemble-label-weights)", h.Estimator)
	}
	if !(h.Alpha >= 0 && h.Alpha <= 1) {
		return fmt.Errorf("alpha: must be in [0, 1], got %v", h.Alpha)
	}
	if !(h.Beta >= 0 && h.Beta <= 1) {
		return fmt.Errorf("beta: must be in [0, 1], got %v", h.Beta)
	}
	if h.M < 1 || h.M > MaxM {
		return fmt.Errorf("m: must be in [1, %d], got %d", MaxM, h.M)
	}
	if h.Sampling != "simultaneous" && h.Sampling != "alternate" {
		return fmt.Errorf("sampling: must be simultaneous or alternate, got %q", h.Sampling)
	}
	if h.Batch < 0 || h.Batch > MaxBatch {
		return fmt.Errorf("batch: must be in [0, %d] (0 = full batch), got %d", MaxBatch, h.Batch)
	}
	if h.OuterData != "train" && h.OuterData != "val" {
		return fmt.Errorf("outer_data: must be train or val, got %q", h.OuterData)
	}
	if h.Estimates != "counted" && h.Estimates != "true" {
		return fmt.Errorf("estimates: must be counted or true, got %q", h.Estimates)
	}
	if err := nonNegative("lr", h.LR); err != nil {
		return err
	}
	if h.EvalEvery < 0 {
		return fmt.Errorf("eval_every: must be >= 0, got %d", h.EvalEvery)
	}
	if h.Direct != "added" && h.Direct != "damped" {
		return fmt.Errorf("direct: must be added (the paper: v⁽ᴹ⁾ + ⟨c^λ⟩) or damped (v⁽⁰⁾ = ⟨c^λ⟩, scaled by alpha every round), got %q", h.Direct)
	}
	return nil
}

// ValidateNetwork checks that the estimator can run on a network of the
// topology kind given, directed when oneWay.
func (h *HypergradientSpec) ValidateNetwork(topology string, oneWay bool) error {
	if e, err := Estimators.Lookup(h.Estimator); err == nil && e.New().NeedsUndirected() && oneWay {
		return fmt.Errorf("estimator: %s needs undirected links (exact recurrent backpropagation, Eq. 11), and a %s network is directed; use hgp or vr-hgp", h.Estimator, topology)
	}
	return nil
}

// Validate checks the section. Errors name the key, not the section.
func (s *SGPSpec) Validate() error {
	if s.Variant != "after" && s.Variant != "before" {
		return fmt.Errorf("variant: must be after (Eq. 4b) or before (Eq. 4a), got %q", s.Variant)
	}
	if s.Rounds < 1 || s.Rounds > MaxRounds {
		return fmt.Errorf("rounds: must be in [1, %d], got %d", MaxRounds, s.Rounds)
	}
	if s.Batch < 0 || s.Batch > MaxBatch {
		return fmt.Errorf("batch: must be in [0, %d] (0 = full batch), got %d", MaxBatch, s.Batch)
	}
	if s.EvalEvery < 0 {
		return fmt.Errorf("eval_every: must be >= 0 (0 = only after the last round), got %d", s.EvalEvery)
	}
	if len(s.LR.Milestones) > MaxRounds {
		return fmt.Errorf("lr.milestones: at most %d, got %d", MaxRounds, len(s.LR.Milestones))
	}
	if err := s.LR.Optim().Validate(); err != nil {
		return fmt.Errorf("lr: %w", err)
	}
	if err := nonNegative("weight_floor", s.WeightFloor); err != nil {
		return err
	}
	return nil
}

// Validate checks the section given the hyper-gradient estimator. Errors
// name the key, not the section.
func (o *OuterSpec) Validate(estimator string) error {
	if o.Steps < 0 || o.Steps > MaxOuterSteps {
		return fmt.Errorf("steps: must be in [0, %d], got %d", MaxOuterSteps, o.Steps)
	}
	if o.Steps > 0 && estimator == "none" {
		return fmt.Errorf("steps: outer steps need a hyper-gradient; set hypergradient.estimator (or a pdbo-* method)")
	}
	if o.Patience < 0 || o.Patience > MaxOuterSteps {
		return fmt.Errorf("patience: must be in [0, %d] outer steps (0: run all of them), got %d", MaxOuterSteps, o.Patience)
	}
	if o.Optimizer != "adam" && o.Optimizer != "sgd" {
		return fmt.Errorf("optimizer: must be adam or sgd, got %q", o.Optimizer)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"lr", o.LR}, {"lr_labels", o.LRLabels}} {
		if !(c.v > 0) || math.IsInf(c.v, 0) {
			return fmt.Errorf("%s: learning rate must be a finite number > 0, got %v", c.name, c.v)
		}
	}
	if !(o.Beta1 >= 0 && o.Beta1 < 1) || !(o.Beta2 >= 0 && o.Beta2 < 1) {
		return fmt.Errorf("beta1, beta2: must be in [0, 1), got %v, %v", o.Beta1, o.Beta2)
	}
	if !(o.Eps > 0) || math.IsInf(o.Eps, 0) {
		return fmt.Errorf("eps: must be a finite number > 0, got %v", o.Eps)
	}
	return nil
}
