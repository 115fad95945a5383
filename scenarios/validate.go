package scenarios

import (
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/faults"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Bounds of the sizes a scenario can name that no plug-in owns (pdbo's
// sections have theirs in their family). The resource estimate (Estimate)
// bounds their products.
const (
	MaxTimeout  = 24 * time.Hour
	MaxParallel = 1024
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
	most := graph.MaxNodes
	if t := sc.Network.Topology.Params; t != nil {
		most = graph.MaxNodesOf(t)
	}
	if sc.Clients < 2 || sc.Nodes() > most {
		return fmt.Errorf("clients: must be in [2, %d], got %d (network %s)", most-sc.Nodes()+sc.Clients, sc.Clients, sc.Network.Topology.Name)
	}
	if h := sc.Hypergradient; sc.Nodes() > graph.MaxNodes && h.Estimator != "none" && (h.Estimates == "true" || h.Oracle) {
		return fmt.Errorf("hypergradient: estimates: true and oracle: true need the exact p̄, an n × n matrix: at most %d clients, got %d", graph.MaxNodes, sc.Clients)
	}
	if err := sc.validateAlgorithm(); err != nil {
		return err
	}
	if err := sc.validatePrecision(); err != nil {
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
	if err := sc.Hypergradient.Validate(sc.Model.Head.Name); err != nil {
		return fmt.Errorf("hypergradient.%w", err)
	}
	if err := sc.Hypergradient.ValidateNetwork(sc.Network.Topology.Name, sc.Network.Topology.Params.OneWay()); err != nil {
		return fmt.Errorf("hypergradient.%w", err)
	}
	if err := sc.SGP.Validate(); err != nil {
		return fmt.Errorf("sgp.%w", err)
	}
	switch sc.Runtime.Driver {
	case "auto", "actors", "sequential":
	default:
		return fmt.Errorf("runtime.driver: must be auto, actors or sequential, got %q", sc.Runtime.Driver)
	}
	if err := sc.Outer.Validate(sc.Hypergradient.Estimator); err != nil {
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
			return fmt.Errorf("faults[%d]: kind: missing (registered: %v)", k, faults.Faults.Kinds())
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

// applyMethod fills model.head and hypergradient.estimator from the method
// preset (the preset wins over what the file says) and resolves
// estimator "auto": HGP on fully-connected and static networks, VR-HGP on
// the others, whose links fail at random (PDBO paper App. D). It is
// idempotent.
func (sc *Scenario) applyMethod() error {
	sc.SGP.Isolated = false // only a preset isolates the clients
	if sc.Method != "" {
		m, err := Methods.Lookup(sc.Method)
		if err != nil {
			return fmt.Errorf("method: %v", err)
		}
		preset := m.New()
		if err := preset.Apply(sc); err != nil {
			return err
		}
		sc.SGP.Isolated = preset.Isolated()
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

// Nodes returns the number of network nodes: the clients, and node 0 for
// the server of a server algorithm.
func (sc *Scenario) Nodes() int {
	if sc.Algorithm.Params != nil && sc.Algorithm.Params.Server() {
		return sc.Clients + 1
	}
	return sc.Clients
}

// validateAlgorithm checks the algorithm, and that a scenario sets no
// section its algorithm does not own (optim.SectionOwner): it would mean
// nothing. The method presets and the head belong with the owner of the
// hypergradient section, unless the algorithm trains λ itself.
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
	if _, ok := sc.Data.Source.Params.(*datasets.FederatedData); ok && !a.Params.Server() {
		return fmt.Errorf("data.kind: federated gives node 0 (a server) the test data only; it needs a server algorithm, not %s", a.Name)
	}
	if h, ok := a.Params.(interface{ ValidateHead(head string) error }); ok {
		if err := h.ValidateHead(sc.Model.Head.Name); err != nil {
			return fmt.Errorf("model.head: %w", err)
		}
	}
	owned := map[string]bool{}
	if o, ok := a.Params.(optim.SectionOwner); ok {
		for _, k := range o.Sections() {
			owned[k] = true
		}
	}
	def := Default()
	for _, c := range []struct {
		key, section string
		set          bool
	}{
		{"method", "hypergradient", sc.Method != ""},
		{"sgp", "sgp", !reflect.DeepEqual(sc.SGP, def.SGP)},
		{"hypergradient", "hypergradient", !reflect.DeepEqual(sc.Hypergradient, def.Hypergradient)},
		{"outer", "outer", !reflect.DeepEqual(sc.Outer, def.Outer)},
		{"method_overrides", "hypergradient", len(sc.MethodOverrides) > 0},
		{"model.head", "hypergradient", sc.Model.Head.Name != "none" && !trainsLambda},
	} {
		if c.set && !owned[c.section] {
			return fmt.Errorf("%s: means nothing for algorithm %s (it belongs to %s); remove it", c.key, a.Name, sectionOwner(c.section))
		}
	}
	if a.Params.Server() && sc.Network.Topology.Name != "star" {
		return fmt.Errorf("network.kind: algorithm %s has a server, node 0, and needs a star network with the server at its hub, got %s", a.Name, sc.Network.Topology.Name)
	}
	return nil
}

// validatePrecision checks precision, and that the algorithm computes in
// float32 when asked to (it declared optim.CanFloat32).
func (sc *Scenario) validatePrecision() error {
	if !slices.Contains(Precisions, sc.Precision) {
		return fmt.Errorf("precision: must be one of %s, got %q", strings.Join(Precisions, ", "), sc.Precision)
	}
	if !sc.Float32() {
		return nil
	}
	if e, err := optim.Algorithms.Lookup(sc.Algorithm.Name); err == nil && e.Can(optim.CanFloat32) {
		return nil
	}
	// An experiment's own algorithm (not registered) says so itself.
	if c, ok := sc.Algorithm.Params.(interface{ Float32() bool }); ok && c.Float32() {
		return nil
	}
	can := "none does yet"
	if names := optim.Algorithms.KindsThatCan(optim.CanFloat32); len(names) > 0 {
		can = "those that do: " + strings.Join(names, ", ")
	}
	return fmt.Errorf("precision: algorithm %s computes in float64 only, not float32 (%s)", sc.Algorithm.Name, can)
}

// sectionOwner names the algorithms that own a top-level section.
func sectionOwner(key string) string {
	var names []string
	for _, k := range optim.Algorithms.Kinds() {
		a, _ := optim.Algorithms.Lookup(k)
		if o, ok := a.New().(optim.SectionOwner); ok && slices.Contains(o.Sections(), key) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return "no algorithm"
	}
	return strings.Join(names, ", ")
}

// Section implements optim.Sections: a pointer to the top-level section
// under key (its yaml key), or nil.
func (sc *Scenario) Section(key string) any {
	var out any
	registry.Fields(reflect.ValueOf(sc).Elem(), func(_ int, k, _ string, fv reflect.Value) {
		if k == key {
			out = fv.Addr().Interface()
		}
	})
	return out
}
