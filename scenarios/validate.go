package scenarios

import (
	"fmt"
	"math"
	"net"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Bounds of the sizes a scenario can name that no plug-in owns. The
// resource estimate (Estimate) bounds their products.
const (
	MaxRounds     = 10_000_000 // sgp.rounds
	MaxM          = 1_000_000  // hypergradient.m
	MaxOuterSteps = 100_000    // outer.steps
	MaxBatch      = models.MaxExamplesPerClient
	MaxTimeout    = 24 * time.Hour
	MaxParallel   = 1024
)

// Validate checks every field and says what is allowed. It reads no data
// file and builds nothing of size n²; checks that need the built network
// (connectivity, Assumption 6) happen in Build and CheckNetwork.
func (sc *Scenario) Validate() error {
	if err := sc.applyMethod(); err != nil {
		return err
	}
	if !nameRE.MatchString(sc.Name) {
		return fmt.Errorf("name: must be letters, digits, '.', '_' or '-' (it names the output folder), got %q", sc.Name)
	}
	if sc.Clients < 2 || sc.Nodes() > graph.MaxNodes {
		return fmt.Errorf("clients: must be in [2, %d], got %d", graph.MaxNodes-sc.Nodes()+sc.Clients, sc.Clients)
	}
	if err := sc.validateAlgorithm(); err != nil {
		return err
	}
	if err := sc.Network.Topology.Params.Validate(sc.Nodes()); err != nil {
		return fmt.Errorf("network (%s): %w", sc.Network.Topology.Name, err)
	}
	for k, f := range sc.Network.Failures {
		if f.Params == nil {
			return fmt.Errorf("network.failures[%d]: kind: missing (registered: %v)", k, graph.Failures.Kinds())
		}
		if err := f.Params.Validate(sc.Nodes()); err != nil {
			return fmt.Errorf("network.failures[%d] (%s): %w", k, f.Name, err)
		}
	}
	if err := sc.Data.Source.Params.Validate(sc.Nodes()); err != nil {
		return fmt.Errorf("data (%s): %w", sc.Data.Source.Name, err)
	}
	features, classes := sc.Data.Source.Params.Shape()
	if err := sc.Model.Arch.Params.Validate(features, classes); err != nil {
		return fmt.Errorf("model (%s): %w", sc.Model.Arch.Name, err)
	}
	if h, ok := sc.Model.Head.Params.(models.HeadModelValidator); ok {
		if err := h.ValidateModel(sc.Model.Arch.Params, features, classes); err != nil {
			return fmt.Errorf("model.head (%s): %w", sc.Model.Head.Name, err)
		}
	}
	if err := sc.Model.HeadParams().Validate(); err != nil {
		return fmt.Errorf("model.%w", err)
	}
	if err := sc.Hypergradient.validate(sc.Model.Head.Name); err != nil {
		return fmt.Errorf("hypergradient.%w", err)
	}
	if e, err := optim.Estimators.Lookup(sc.Hypergradient.Estimator); err == nil && e.New().NeedsUndirected() && sc.Network.Topology.Params.OneWay() {
		return fmt.Errorf("hypergradient.estimator: %s needs undirected links (exact recurrent backpropagation, Eq. 11), and a %s network is directed; use hgp or vr-hgp", sc.Hypergradient.Estimator, sc.Network.Topology.Name)
	}
	if err := sc.SGP.validate(); err != nil {
		return fmt.Errorf("sgp.%w", err)
	}
	switch sc.Runtime.Driver {
	case "auto", "actors", "sequential":
	default:
		return fmt.Errorf("runtime.driver: must be auto, actors or sequential, got %q", sc.Runtime.Driver)
	}
	if err := sc.Outer.validate(sc.Hypergradient.Estimator); err != nil {
		return fmt.Errorf("outer.%w", err)
	}
	if sc.Experiment != nil {
		if sc.Experiment.Params == nil {
			return fmt.Errorf("experiment.kind: missing (registered: %v)", Experiments.Kinds())
		}
		if err := sc.Experiment.Params.Validate(sc); err != nil {
			return fmt.Errorf("experiment (%s): %w", sc.Experiment.Name, err)
		}
	}
	for k, f := range sc.Faults {
		if f.Fault.Params == nil {
			return fmt.Errorf("faults[%d]: kind: missing (registered: %v)", k, optim.Faults.Kinds())
		}
		if err := f.Fault.Params.Validate(); err != nil {
			return fmt.Errorf("faults[%d] (%s): %w", k, f.Fault.Name, err)
		}
		if len(f.Clients) == 0 {
			return fmt.Errorf("faults[%d] (%s): clients: list the faulty clients", k, f.Fault.Name)
		}
		for _, c := range f.Clients {
			if c < 0 || c >= sc.Nodes() {
				return fmt.Errorf("faults[%d] (%s): clients: %d is not a node in [0, %d)", k, f.Fault.Name, c, sc.Nodes())
			}
		}
	}
	if sc.Runtime.Parallel < 0 || sc.Runtime.Parallel > MaxParallel {
		return fmt.Errorf("runtime.parallel: must be in [0, %d] (0: every core), got %d", MaxParallel, sc.Runtime.Parallel)
	}
	if sc.Runtime.CheckpointEvery < 0 || sc.Runtime.CheckpointEvery > 1_000_000 {
		return fmt.Errorf("runtime.checkpoint_every: must be in [0, %d] outer steps (0: no checkpoints), got %d", 1_000_000, sc.Runtime.CheckpointEvery)
	}
	if sc.Runtime.RoundTimeout < 0 || sc.Runtime.RoundTimeout > MaxTimeout {
		return fmt.Errorf("runtime.round_timeout: must be in [0, %v], got %v", MaxTimeout, sc.Runtime.RoundTimeout)
	}
	if err := ValidateWorkers(sc.Runtime.Workers); err != nil {
		return fmt.Errorf("runtime.workers: %w", err)
	}
	if len(sc.Runtime.Workers) > 0 && sc.Runtime.DriverName() != "actors" {
		return fmt.Errorf("runtime.workers: worker processes host actors; runtime.driver must be actors or auto, got %q", sc.Runtime.Driver)
	}
	return nil
}

// ValidateWorkers checks a list of worker addresses: each host:port with
// a host and a port in 1 … 65535, none twice (a worker hosts one block of
// clients per run).
func ValidateWorkers(ws []string) error {
	seen := make(map[string]bool, len(ws))
	for k, w := range ws {
		host, port, err := net.SplitHostPort(w)
		if err != nil {
			return fmt.Errorf("[%d] %q: want host:port: %v", k, w, err)
		}
		if host == "" {
			return fmt.Errorf("[%d] %q: the host is missing", k, w)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("[%d] %q: the port must be a number in 1 … 65535", k, w)
		}
		if seen[w] {
			return fmt.Errorf("[%d] %q: listed twice", k, w)
		}
		seen[w] = true
	}
	return nil
}

// shape returns the number of features and classes of the scenario's data.
func (sc *Scenario) Shape() (features, classes int) { return sc.Data.Source.Params.Shape() }

func nonNegative(name string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: must be a finite number >= 0, got %v", name, v)
	}
	return nil
}

func (h *HypergradientSpec) validate(head string) error {
	if h.Estimator == "none" {
		return nil
	}
	if !optim.Estimators.Has(h.Estimator) {
		return fmt.Errorf("estimator: must be none, auto or an estimator kind (%s), got %q", strings.Join(optim.Estimators.Kinds(), ", "), h.Estimator)
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
	return nil
}

func (s *SGPSpec) validate() error {
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
	return nil
}

// Optim returns the learning-rate schedule.
func (s ScheduleSpec) Optim() optim.Schedule {
	return optim.Schedule{Kind: s.Schedule, Base: s.Base, Milestones: s.Milestones, Gamma: s.Gamma, Decay: s.Decay, Power: s.Power}
}

// applyMethod fills model.head and hypergradient.estimator from the method
// preset (the preset wins over what the file says) and resolves
// estimator "auto": HGP on fully-connected and static networks, VR-HGP on
// the others, whose links fail at random (PDBO paper App. D). It is
// idempotent.
func (sc *Scenario) applyMethod() error {
	if sc.Method != "" {
		m, err := Methods.Lookup(sc.Method)
		if err != nil {
			return fmt.Errorf("method: %v", err)
		}
		if err := m.New().Apply(sc); err != nil {
			return err
		}
	}
	for m := range sc.MethodOverrides {
		if !Methods.Has(m) {
			return fmt.Errorf("method_overrides: unknown method %q (registered: %v)", m, Methods.Kinds())
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
		switch sc.Network.Topology.Name {
		case "fully-connected", "static-undirected":
			sc.Hypergradient.Estimator = "hgp"
		default:
			sc.Hypergradient.Estimator = "vr-hgp"
		}
	}
	return nil
}

// isLocal reports the methods that train without communication.
func (sc *Scenario) IsLocal() bool { return sc.Method == "local" || sc.Method == "local-mtl" }

func (o *OuterSpec) validate(estimator string) error {
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

// Nodes returns the number of network nodes: the clients, and node 0 for
// the server of a server algorithm.
func (sc *Scenario) Nodes() int {
	if sc.Algorithm.Params != nil && sc.Algorithm.Params.Server() {
		return sc.Clients + 1
	}
	return sc.Clients
}

// validateAlgorithm checks the algorithm, and that a scenario whose
// algorithm is not pdbo sets none of pdbo's sections (they would mean
// nothing).
func (sc *Scenario) validateAlgorithm() error {
	a := sc.Algorithm
	if a.Params == nil {
		return fmt.Errorf("algorithm.kind: missing (registered: %v)", optim.Algorithms.Kinds())
	}
	if err := a.Params.Validate(sc.Nodes()); err != nil {
		return fmt.Errorf("algorithm (%s): %w", a.Name, err)
	}
	if h, ok := sc.Model.Head.Params.(interface{ Validate(arch string) error }); ok {
		if err := h.Validate(sc.Model.Arch.Name); err != nil {
			return fmt.Errorf("model.head (%s): %w", sc.Model.Head.Name, err)
		}
	}
	_, trainsLambda := a.Params.(interface{ TrainsLambda() bool })
	if _, ok := sc.Data.Source.Params.(*models.FederatedData); ok && !a.Params.Server() {
		return fmt.Errorf("data.kind: federated gives node 0 (a server) the test data only; it needs a server algorithm, not %s", a.Name)
	}
	if a.Name == "pdbo" {
		if sc.Model.Head.Name == "hyper-representation" {
			return fmt.Errorf("model.head: hyper-representation is for the federated bilevel algorithms (fednest, lfednest, fbo-aggitd), not pdbo")
		}
		return nil
	}
	def := Default()
	for _, c := range []struct {
		key string
		set bool
	}{
		{"method", sc.Method != ""},
		{"sgp", !reflect.DeepEqual(sc.SGP, def.SGP)},
		{"hypergradient", !reflect.DeepEqual(sc.Hypergradient, def.Hypergradient)},
		{"outer", !reflect.DeepEqual(sc.Outer, def.Outer)},
		{"method_overrides", len(sc.MethodOverrides) > 0},
		{"model.head", sc.Model.Head.Name != "none" && !trainsLambda},
	} {
		if c.set {
			return fmt.Errorf("%s: means nothing for algorithm %s (it belongs to pdbo); remove it", c.key, a.Name)
		}
	}
	if a.Params.Server() && sc.Network.Topology.Name != "star" {
		return fmt.Errorf("network.kind: algorithm %s has a server, node 0, and needs a star network with the server at its hub, got %s", a.Name, sc.Network.Topology.Name)
	}
	return nil
}
