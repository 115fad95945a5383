package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"slices"

	"hgpsim/optim"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate checks every field and says what is allowed. Checks that need
// the built network (connectivity, Assumption 6) happen in Build.
func (sc *Scenario) Validate() error {
	if err := sc.applyMethod(); err != nil {
		return err
	}
	if !nameRE.MatchString(sc.Name) {
		return fmt.Errorf("name: must be letters, digits, '.', '_' or '-' (it names the output folder), got %q", sc.Name)
	}
	if sc.Clients < 2 {
		return fmt.Errorf("clients: must be >= 2, got %d", sc.Clients)
	}
	if sc.Clients > 100000 {
		return fmt.Errorf("clients: at most 100000 are supported, got %d", sc.Clients)
	}
	if err := sc.Network.validate(sc.Clients); err != nil {
		return fmt.Errorf("network.%w", err)
	}
	if err := sc.Data.validate(); err != nil {
		return fmt.Errorf("data.%w", err)
	}
	if err := sc.Model.validate(sc.Data.Classes); err != nil {
		return fmt.Errorf("model.%w", err)
	}
	if err := sc.Hypergradient.validate(sc.Model.Head); err != nil {
		return fmt.Errorf("hypergradient.%w", err)
	}
	if err := sc.SGP.validate(); err != nil {
		return fmt.Errorf("sgp.%w", err)
	}
	switch sc.Runtime.Driver {
	case "actors", "sequential":
	default:
		return fmt.Errorf("runtime.driver: must be actors or sequential, got %q", sc.Runtime.Driver)
	}
	if err := sc.Outer.validate(sc.Hypergradient.Estimator); err != nil {
		return fmt.Errorf("outer.%w", err)
	}
	if sc.HGPError != nil {
		if err := sc.HGPError.validate(); err != nil {
			return fmt.Errorf("hgp_error.%w", err)
		}
	}
	if sc.Runtime.RoundTimeout < 0 {
		return fmt.Errorf("runtime.round_timeout: must be >= 0, got %v", sc.Runtime.RoundTimeout)
	}
	return nil
}

func prob(name string, v float64) error {
	if !(v > 0 && v <= 1) {
		return fmt.Errorf("%s: must be in (0, 1], got %v", name, v)
	}
	return nil
}

func (n *NetworkSpec) validate(clients int) error {
	if n.Burst < 0 {
		return fmt.Errorf("burst: must be >= 0 rounds (0 or 1: links redrawn every round), got %d", n.Burst)
	}
	switch n.Kind {
	case "fully-connected":
	case "static-undirected":
		if err := prob("edge_prob", n.EdgeProb); err != nil {
			return err
		}
		if n.Weights != "fmmc" && n.Weights != "metropolis" {
			return fmt.Errorf("weights: must be fmmc or metropolis, got %q", n.Weights)
		}
	case "stochastic-undirected", "stochastic-directed":
		if err := prob("delta_min", n.DeltaMin); err != nil {
			return err
		}
		if err := prob("delta_max", n.DeltaMax); err != nil {
			return err
		}
		if n.DeltaMin > n.DeltaMax {
			return fmt.Errorf("delta_min (%v) must not exceed delta_max (%v)", n.DeltaMin, n.DeltaMax)
		}
	case "ring", "star":
		if err := prob("prob", n.Prob); err != nil {
			return err
		}
	case "edge-list":
		if len(n.Edges) == 0 {
			return fmt.Errorf("edges: an edge-list network needs at least one edge")
		}
		for k, e := range n.Edges {
			if e.From < 0 || e.From >= clients || e.To < 0 || e.To >= clients {
				return fmt.Errorf("edges[%d]: clients must be in [0, %d), got %d→%d", k, clients, e.From, e.To)
			}
			if e.From == e.To {
				return fmt.Errorf("edges[%d]: self-loops are implicit; remove %d→%d", k, e.From, e.To)
			}
			if err := prob(fmt.Sprintf("edges[%d].prob", k), e.Prob); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("kind: must be one of fully-connected, static-undirected, stochastic-undirected, stochastic-directed, ring, star, edge-list; got %q", n.Kind)
	}
	return nil
}

func (d *DataSpec) validate() error {
	switch d.Kind {
	case "synthetic":
	case "fashion-mnist", "mnist", "emnist":
		return d.validateReal()
	default:
		return fmt.Errorf("kind: must be synthetic, fashion-mnist, mnist or emnist, got %q", d.Kind)
	}
	switch {
	case d.Classes < 2:
		return fmt.Errorf("classes: must be >= 2, got %d", d.Classes)
	case d.Features < 1:
		return fmt.Errorf("features: must be >= 1, got %d", d.Features)
	case d.Train < 1:
		return fmt.Errorf("train: must be >= 1 example per client, got %d", d.Train)
	case d.Val < 1:
		return fmt.Errorf("val: must be >= 1 example per client, got %d", d.Val)
	case d.Test < 1:
		return fmt.Errorf("test: must be >= 1 example per client, got %d", d.Test)
	case !(d.Alpha > 0) || math.IsInf(d.Alpha, 0):
		return fmt.Errorf("alpha: must be a finite number > 0, got %v", d.Alpha)
	case !(d.Separation > 0) || math.IsInf(d.Separation, 0):
		return fmt.Errorf("separation: must be a finite number > 0, got %v", d.Separation)
	case !(d.Shift >= 0) || math.IsInf(d.Shift, 0):
		return fmt.Errorf("shift: must be a finite number >= 0, got %v", d.Shift)
	case !(d.Noise >= 0) || math.IsInf(d.Noise, 0):
		return fmt.Errorf("noise: must be a finite number >= 0, got %v", d.Noise)
	}
	return nil
}

func (m *ModelSpec) validate(classes int) error {
	switch m.Kind {
	case "softmax", "mlp":
	case "logistic":
		if classes != 2 {
			return fmt.Errorf("kind: logistic is binary and needs data.classes = 2, got %d", classes)
		}
	default:
		return fmt.Errorf("kind: must be softmax, logistic or mlp, got %q", m.Kind)
	}
	if err := nonNegative("l2", m.L2); err != nil {
		return err
	}
	if m.Kind == "mlp" && m.Hidden < 1 {
		return fmt.Errorf("hidden: must be >= 1, got %d", m.Hidden)
	}
	switch m.Head {
	case "none", "label-weights":
	case "ensemble", "ensemble-label-weights":
		if m.K < 1 {
			return fmt.Errorf("k: an ensemble needs k >= 1 models, got %d", m.K)
		}
	default:
		return fmt.Errorf("head: must be none, label-weights, ensemble or ensemble-label-weights, got %q", m.Head)
	}
	if err := nonNegative("outer_l2", m.OuterL2); err != nil {
		return err
	}
	return nonNegative("outer_l2_labels", m.OuterL2Labels)
}

func nonNegative(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: must be a finite number >= 0, got %v", name, v)
	}
	return nil
}

func (h *HypergradientSpec) validate(head string) error {
	switch h.Estimator {
	case "none":
		return nil
	case "hgp", "vr-hgp", "exact", "local":
	default:
		return fmt.Errorf("estimator: must be none, auto, hgp, vr-hgp, exact or local, got %q", h.Estimator)
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
	if h.M < 1 {
		return fmt.Errorf("m: must be >= 1, got %d", h.M)
	}
	if h.Sampling != "simultaneous" && h.Sampling != "alternate" {
		return fmt.Errorf("sampling: must be simultaneous or alternate, got %q", h.Sampling)
	}
	if h.Batch < 0 {
		return fmt.Errorf("batch: must be >= 0 (0 = full batch), got %d", h.Batch)
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
	return nil
}

func (s *SGPSpec) validate() error {
	if s.Variant != "after" && s.Variant != "before" {
		return fmt.Errorf("variant: must be after (Eq. 4b) or before (Eq. 4a), got %q", s.Variant)
	}
	if s.Rounds < 1 {
		return fmt.Errorf("rounds: must be >= 1, got %d", s.Rounds)
	}
	if s.Batch < 0 {
		return fmt.Errorf("batch: must be >= 0 (0 = full batch), got %d", s.Batch)
	}
	if s.EvalEvery < 0 {
		return fmt.Errorf("eval_every: must be >= 0 (0 = only after the last round), got %d", s.EvalEvery)
	}
	if err := s.LR.schedule().Validate(); err != nil {
		return fmt.Errorf("lr: %w", err)
	}
	return nil
}

func (s ScheduleSpec) schedule() optim.Schedule {
	return optim.Schedule{Kind: s.Schedule, Base: s.Base, Milestones: s.Milestones, Gamma: s.Gamma, Decay: s.Decay, Power: s.Power}
}

// Methods are the presets of `method`: the paper's approaches and baselines.
var Methods = []string{"local", "sgp", "local-mtl", "sgp-mtl", "pdbo-da", "pdbo-mtl", "pdbo-mtl-da", "pdbo-mtl-local"}

// applyMethod fills model.head and hypergradient.estimator from the method
// preset (the preset wins over what the file says) and resolves
// estimator "auto": HGP on fully-connected and static networks, VR-HGP on
// stochastic ones (PDBO paper App. D). It is idempotent.
func (sc *Scenario) applyMethod() error {
	switch sc.Method {
	case "":
	case "sgp", "local":
		sc.Model.Head, sc.Hypergradient.Estimator, sc.Outer.Steps = "none", "none", 0
	case "sgp-mtl", "local-mtl":
		sc.Model.Head, sc.Hypergradient.Estimator, sc.Outer.Steps = "ensemble", "none", 0
	case "pdbo-da", "pdbo-mtl", "pdbo-mtl-da", "pdbo-mtl-local":
		sc.Model.Head = map[string]string{"pdbo-da": "label-weights", "pdbo-mtl": "ensemble",
			"pdbo-mtl-da": "ensemble-label-weights", "pdbo-mtl-local": "ensemble"}[sc.Method]
		if sc.Method == "pdbo-mtl-local" {
			sc.Hypergradient.Estimator = "local"
		} else if sc.Hypergradient.Estimator == "none" || sc.Hypergradient.Estimator == "local" {
			sc.Hypergradient.Estimator = "auto"
		}
		if sc.Outer.Steps < 1 {
			return fmt.Errorf("outer.steps: method %s needs at least one outer step, got %d", sc.Method, sc.Outer.Steps)
		}
	default:
		return fmt.Errorf("method: must be one of %v (or omitted), got %q", Methods, sc.Method)
	}
	for m := range sc.MethodOverrides {
		if !slices.Contains(Methods, m) {
			return fmt.Errorf("method_overrides: unknown method %q (allowed: %v)", m, Methods)
		}
	}
	if o, ok := sc.MethodOverrides[sc.Method]; ok {
		set := func(dst *float64, v *float64) {
			if v != nil {
				*dst = *v
			}
		}
		set(&sc.SGP.LR.Base, o.SGPLR)
		set(&sc.Outer.LR, o.OuterLR)
		set(&sc.Outer.LRLabels, o.OuterLRLabels)
		set(&sc.Model.OuterL2, o.OuterL2)
		set(&sc.Model.OuterL2Labels, o.OuterL2Labels)
	}
	if sc.Hypergradient.Estimator == "auto" {
		switch sc.Network.Kind {
		case "fully-connected", "static-undirected":
			sc.Hypergradient.Estimator = "hgp"
		default:
			sc.Hypergradient.Estimator = "vr-hgp"
		}
	}
	return nil
}

// isLocal reports the methods that train without communication.
func (sc *Scenario) isLocal() bool { return sc.Method == "local" || sc.Method == "local-mtl" }

func (o *OuterSpec) validate(estimator string) error {
	if o.Steps < 0 {
		return fmt.Errorf("steps: must be >= 0, got %d", o.Steps)
	}
	if o.Steps > 0 && estimator == "none" {
		return fmt.Errorf("steps: outer steps need a hyper-gradient; set hypergradient.estimator (or a pdbo-* method)")
	}
	if o.Optimizer != "adam" && o.Optimizer != "sgd" {
		return fmt.Errorf("optimizer: must be adam or sgd, got %q", o.Optimizer)
	}
	for name, v := range map[string]float64{"lr": o.LR, "lr_labels": o.LRLabels} {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: learning rate must be a finite number > 0, got %v", name, v)
		}
	}
	if !(o.Beta1 >= 0 && o.Beta1 < 1) || !(o.Beta2 >= 0 && o.Beta2 < 1) {
		return fmt.Errorf("beta1, beta2: must be in [0, 1), got %v, %v", o.Beta1, o.Beta2)
	}
	if !(o.Eps > 0) {
		return fmt.Errorf("eps: must be > 0, got %v", o.Eps)
	}
	return nil
}

func (d *DataSpec) validateReal() error {
	switch {
	case d.Kind != "fashion-mnist" && d.Dir == "":
		return fmt.Errorf("dir: %s has no standard location; give the folder of its IDX files", d.Kind)
	case !(d.Fraction > 0 && d.Fraction <= 1):
		return fmt.Errorf("fraction: must be in (0, 1], got %v", d.Fraction)
	case !(d.Alpha > 0) || math.IsInf(d.Alpha, 0):
		return fmt.Errorf("alpha: must be a finite number > 0, got %v", d.Alpha)
	case d.Clusters < 0:
		return fmt.Errorf("clusters: must be >= 0, got %d", d.Clusters)
	case !(d.TestFrac > 0 && d.TestFrac < 1):
		return fmt.Errorf("test_frac: must be in (0, 1), got %v", d.TestFrac)
	case !(d.TrainFrac > 0 && d.TrainFrac < 1):
		return fmt.Errorf("train_frac: must be in (0, 1), got %v", d.TrainFrac)
	}
	return nil
}
