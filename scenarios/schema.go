package scenarios

import (
	"time"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/faults"
	"hgpsim/optim/pdbo"
)

// Scenario is a validated description of one run. Field docs are the
// scenario reference; docs/scenarios.md repeats them with examples, and
// `hgpsim list` prints every plug-in kind with its parameters.
type Scenario struct {
	Name    string `yaml:"name"`    // run name, used for the output folder
	Method  string `yaml:"method"`  // preset: "" (custom), sgp, local, sgp-mtl, local-mtl, pdbo-da, pdbo-mtl, pdbo-mtl-da, pdbo-mtl-local
	Seed    uint64 `yaml:"seed"`    // root of every random stream
	Clients int    `yaml:"clients"` // n, 2 … graph.MaxNodesOf the network (plus a server node for server algorithms)
	// Algorithm is what the run trains with (optim.Algorithms); pdbo, the
	// default, takes its parameters from the sgp, hypergradient and outer
	// sections (an optim.SectionOwner, which reads them through Section).
	Algorithm registry.Choice[optim.Algorithm] `yaml:"algorithm"`
	// Precision is what the clients compute and send in: float64 (the
	// reference, in which every recorded result was computed) or float32,
	// for the algorithms that declare it (optim.CanFloat32).
	Precision     string                 `yaml:"precision"`
	Network       NetworkSpec            `yaml:"network"`
	Data          DataSpec               `yaml:"data"`
	Model         ModelSpec              `yaml:"model"`
	SGP           pdbo.SGPSpec           `yaml:"sgp"`
	Hypergradient pdbo.HypergradientSpec `yaml:"hypergradient"`
	Outer         pdbo.OuterSpec         `yaml:"outer"`
	// MethodOverrides sets, per method, the few values the paper tunes per
	// method (Table 2 and App. D); applied when Method matches a key.
	MethodOverrides map[string]MethodOverride `yaml:"method_overrides,omitempty"`
	// Faults gives chosen clients a faulty behaviour (faults.Faults) in
	// every phase.
	Faults  []FaultSpec `yaml:"faults,omitempty"`
	Runtime RuntimeSpec `yaml:"runtime"`
	// Experiment, when present, turns the run into a registered experiment
	// (see Experiments), e.g. hgp-error, the error-against-depth
	// experiment of the PDBO paper's App. C.6.
	Experiment *registry.Choice[Experiment] `yaml:"experiment,omitempty"`
}

// NetworkSpec selects the topology (a graph.Topologies kind) with its
// parameters, including its edge process where links fail at random, and
// the failure processes on top of it (graph.Failures).
type NetworkSpec struct {
	Topology registry.Choice[graph.Topology]  `yaml:"kind"`
	Failures []registry.Choice[graph.Failure] `yaml:"failures,omitempty"`
}

// DataSpec selects the data (a datasets.Sources kind) with its parameters.
type DataSpec struct {
	Source registry.Choice[datasets.Source] `yaml:"kind"`
}

// ModelSpec selects the inner model (a models.Architectures kind) and how
// the hyperparameters λ enter it (a models.Heads kind). The head parameters
// are shared by every head, so that a method preset can switch heads.
type ModelSpec struct {
	Arch          registry.Choice[models.Architecture] `yaml:"kind"`
	Head          registry.Choice[models.Head]         `yaml:"head"`
	K             int                                  `yaml:"k"`               // ensemble size
	OuterL2       float64                              `yaml:"outer_l2"`        // L2 rate on λ in F (the ensemble part for ensemble-label-weights)
	OuterL2Labels float64                              `yaml:"outer_l2_labels"` // ensemble-label-weights: L2 rate on the label part of λ
}

func (m *ModelSpec) HeadParams() models.HeadParams {
	return models.HeadParams{K: m.K, OuterL2: m.OuterL2, OuterL2Labels: m.OuterL2Labels}
}

// FaultSpec assigns a fault (a faults.Faults kind with its parameters) to
// clients.
type FaultSpec struct {
	Fault   registry.Choice[faults.Fault] `yaml:"kind"`
	Clients []int                         `yaml:"clients"` // the faulty clients
}

// MethodOverride holds per-method values; unset fields keep the scenario's.
type MethodOverride struct {
	SGPLR         *float64 `yaml:"sgp_lr,omitempty"`          // sgp.lr.base
	OuterLR       *float64 `yaml:"outer_lr,omitempty"`        // outer.lr
	OuterLRLabels *float64 `yaml:"outer_lr_labels,omitempty"` // outer.lr_labels
	OuterL2       *float64 `yaml:"outer_l2,omitempty"`        // model.outer_l2
	OuterL2Labels *float64 `yaml:"outer_l2_labels,omitempty"` // model.outer_l2_labels
}

// RuntimeSpec selects how the run executes.
type RuntimeSpec struct {
	Driver       string        `yaml:"driver"`        // actors | sequential
	RoundTimeout time.Duration `yaml:"round_timeout"` // fail after this long without progress (0 = never)
	// Parallel is the number of goroutines the sequential driver runs the
	// clients on (0 = every core the Go runtime may use); the outputs do
	// not depend on it.
	Parallel int `yaml:"parallel"`
	// Workers lists the hgpsim worker processes (host:port each, as the
	// worker prints it) that host the clients of an actors run, in
	// contiguous blocks; empty runs every client in this process.
	Workers []string `yaml:"workers,omitempty"`
	// CheckpointEvery is the number of boundaries (outer steps, or the
	// evaluations of a long federated phase) between two checkpoints of a
	// run (0: none); `hgpsim resume` continues a stopped run from its last
	// one. Outputs do not depend on it.
	CheckpointEvery int `yaml:"checkpoint_every"`
}

// DriverName is the driver a run uses: Driver, where "auto" means the actor
// runtime when worker processes are named and the sequential driver (on
// every core unless Parallel says otherwise) otherwise — with real models
// the faster choice in one process by far (its blocked mixing); on tiny
// rounds at n ≥ 1,000 the actor runtime can be slightly ahead
// (docs/performance.md).
func (rs RuntimeSpec) DriverName() string {
	if rs.Driver != "auto" {
		return rs.Driver
	}
	if len(rs.Workers) > 0 {
		return "actors"
	}
	return "sequential"
}

// Default returns a scenario with every default filled in; decoding a file
// overwrites what the file sets.
func Default() Scenario {
	return Scenario{
		Name:      "run",
		Seed:      1,
		Clients:   20,
		Algorithm: registry.Choose[optim.Algorithm]("pdbo"),
		Precision: "float64",
		Network:   NetworkSpec{Topology: registry.Choose[graph.Topology]("stochastic-directed")},
		Data:      DataSpec{Source: registry.Choose[datasets.Source]("synthetic")},
		Model: ModelSpec{Arch: registry.Choose[models.Architecture]("softmax"), Head: registry.Choose[models.Head]("none"),
			K: 3, OuterL2: 0.01, OuterL2Labels: 5e-4},
		Hypergradient: pdbo.DefaultHypergradient(),
		SGP:           pdbo.DefaultSGP(),
		Outer:         pdbo.DefaultOuter(),
		Runtime:       RuntimeSpec{Driver: "auto", RoundTimeout: 60 * time.Second, CheckpointEvery: 1},
	}
}

// Precisions are the values of precision, the default first.
var Precisions = []string{"float64", "float32"}

// Float32 reports whether the scenario computes in float32 (precision:
// float32); otherwise it computes in float64.
func (sc *Scenario) Float32() bool { return sc.Precision == "float32" }

// ElemBytes is the size of one element of the clients' vectors and
// payloads in the scenario's precision.
func (sc *Scenario) ElemBytes() int64 {
	if sc.Float32() {
		return 4
	}
	return 8
}
