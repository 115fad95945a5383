package pdbo

import (
	"fmt"

	"hgpsim/graph"
	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("pdbo",
		"Personalized decentralized bilevel optimization (PDBO paper Alg. 1): SGP rounds (push-sum, Eq. 2–4, with Alg. 2's counts), a hyper-gradient phase (HGP, VR-HGP, exact backprop or local) and each client's λ-update, per outer step. Its parameters are the scenario's sgp, hypergradient and outer sections.",
		func() optim.Algorithm { return &algorithm{} }, optim.CanFloat32)
}

// algorithm is the default algorithm. Its parameters are the scenario's
// sgp, hypergradient and outer sections (see SectionKeys).
type algorithm struct{}

func (*algorithm) Server() bool       { return false }
func (*algorithm) Validate(int) error { return nil }

// Sections implements optim.SectionOwner.
func (*algorithm) Sections() []string { return append([]string(nil), SectionKeys[:]...) }

// ValidateHead rejects the head of the federated bilevel algorithms.
func (*algorithm) ValidateHead(head string) error {
	if head == "hyper-representation" {
		return fmt.Errorf("hyper-representation is for the federated bilevel algorithms (fednest, lfednest, fbo-aggitd), not pdbo")
	}
	return nil
}

// SectionKeys are the top-level scenario sections pdbo owns, in the order
// Sections reads them.
var SectionKeys = [3]string{"sgp", "hypergradient", "outer"}

// Sections are pdbo's parameters as the scenario holds them.
type Sections struct {
	SGP           *SGPSpec
	Hypergradient *HypergradientSpec
	Outer         *OuterSpec
}

// ReadSections returns pdbo's sections from a scenario's view; a view
// without them is a programmer error of the caller.
func ReadSections(v optim.Sections) (Sections, error) {
	if v == nil {
		return Sections{}, fmt.Errorf("pdbo: the run gave no scenario sections")
	}
	s := Sections{}
	var ok [3]bool
	s.SGP, ok[0] = v.Section(SectionKeys[0]).(*SGPSpec)
	s.Hypergradient, ok[1] = v.Section(SectionKeys[1]).(*HypergradientSpec)
	s.Outer, ok[2] = v.Section(SectionKeys[2]).(*OuterSpec)
	for k, o := range ok {
		if !o {
			return Sections{}, fmt.Errorf("pdbo: the scenario has no %s section of pdbo's type", SectionKeys[k])
		}
	}
	return s, nil
}

// Plan implements optim.Algorithm: the clients of Alg. 1 and its
// schedule, over self-loops only for the local baselines.
func (*algorithm) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	sec, err := ReadSections(s.Sections)
	if err != nil {
		return nil, nil, err
	}
	if sec.SGP.Isolated {
		s.Net = isolated(s.Net.N)
	}
	cfg := NewConfig(sec, s)
	prog := NewAlg1(sec, cfg)
	var trueP, trueDelta [][]float64
	if cfg.Estimator != "" && sec.Hypergradient.Estimates == "true" {
		trueP, trueDelta = s.Net.ExpectedPushWeights(), make([][]float64, s.Net.N)
		for i := range trueDelta {
			trueDelta[i] = make([]float64, s.Net.N)
			for j := range s.Net.N {
				trueDelta[i][j] = s.Net.Delta(j, i) // δ̄_{j→i}
			}
		}
	}
	factory := func(i int) (optim.Client, error) {
		if f := s.Float32; f != nil {
			c := NewClient(i, cfg, f.Model.Clone(), s.Data[i], f.X0)
			if trueP != nil {
				c.UseTrueEstimates(trueP[i], trueDelta[i])
			}
			return c, nil
		}
		c := NewClient(i, cfg, s.Model.Clone(), s.Data[i], s.X0)
		if trueP != nil {
			c.UseTrueEstimates(trueP[i], trueDelta[i])
		}
		return c, nil
	}
	return factory, prog, nil
}

// NewConfig is the configuration every client of a run shares, from its
// sections and what the run built.
func NewConfig(sec Sections, s *optim.Setup) *Config {
	h := sec.Hypergradient
	variant := AfterComm
	if sec.SGP.Variant == "before" {
		variant = BeforeComm
	}
	sampling := Simultaneous
	if h.Sampling == "alternate" {
		sampling = Alternate
	}
	sched := sec.SGP.LR.Optim()
	lr := h.LR
	if lr == 0 {
		lr = sched.At(sec.SGP.Rounds - 1)
	}
	cfg := &Config{N: s.Net.N, SGP: SGPConfig{Variant: variant, LR: sched, BatchSize: sec.SGP.Batch, WeightFloor: sec.SGP.WeightFloor},
		Alpha: h.Alpha, Beta: h.Beta, DampDirect: h.Direct == "damped", Sampling: sampling, HyperBatch: h.Batch, HyperLR: lr,
		OuterVal: h.OuterData == "val", Seed: s.Seed, Warm: !sec.Outer.Restart}
	if h.Estimator != "none" {
		cfg.Estimator = h.Estimator
		dimLambda, labels := s.Model.DimLambda(), -1
		if s.Head == "ensemble-label-weights" {
			labels = s.HeadParams.K // λ = [λ^K; λ^C]
		}
		outer := *sec.Outer // the clients' optimizers are built later, maybe elsewhere
		cfg.NewOptimizer = func() OuterOptimizer { return outerOptimizer(&outer, dimLambda, labels) }
	}
	return cfg
}

// NewAlg1 is the schedule of a run with configuration cfg.
func NewAlg1(sec Sections, cfg *Config) *Alg1 {
	h := sec.Hypergradient
	a := &Alg1{Steps: sec.Outer.Steps, SGPRounds: sec.SGP.Rounds, SGPEval: sec.SGP.EvalEvery,
		Warm: !sec.Outer.Restart, Patience: sec.Outer.Patience, Track: cfg.N <= ExactEstimateLimit, Config: cfg}
	if h.Estimator != "none" {
		kind, _ := Estimators.Lookup(h.Estimator)
		a.Hyper, a.HyperEval = true, h.EvalEvery
		a.HyperRounds = kind.New().Rounds(h.M, cfg.Sampling)
		a.ReportState = h.Oracle
	}
	return a
}

// outerOptimizer builds one client's λ-optimizer with per-coordinate
// rates: from coordinate labels on (the label part λ^C of
// ensemble-label-weights; none when labels < 0) lr_labels, lr before.
func outerOptimizer(o *OuterSpec, dimLambda, labels int) OuterOptimizer {
	lr := make([]float64, dimLambda)
	for k := range lr {
		lr[k] = o.LR
		if labels >= 0 && k >= labels {
			lr[k] = o.LRLabels
		}
	}
	if o.Optimizer == "sgd" {
		return &SGD{LR: lr}
	}
	return &Adam{LR: lr, Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps}
}

// isolated is the network of the local baselines: self-loops only. It does
// not satisfy Assumption 2 and is built without graph.Build on purpose.
func isolated(n int) *graph.Network {
	p := make([][]float64, n)
	for i := range p {
		p[i] = make([]float64, n)
		p[i][i] = 1
	}
	return &graph.Network{Kind: "local", N: n, Prob: p, Symmetric: true}
}
