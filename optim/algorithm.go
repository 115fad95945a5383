package optim

import (
	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
)

// Algorithm is what a scenario trains with (`algorithm:`): it turns what a
// run has built into its clients and its schedule. Decentralized
// algorithms use every node as a client; server-based ones (federated
// methods) make node 0 the server — the hub of a star whose links the
// edge process may drop — and nodes 1 … m its clients, so that the server
// is a node of the same runtime, not a second simulator. See Algorithms.
type Algorithm interface {
	// Server reports an algorithm whose node 0 is a server: the network
	// then has one node more than the scenario has clients.
	Server() bool
	// Validate checks the parameters for a network of n nodes.
	Validate(n int) error
	// Plan returns the factory of the run's clients and its program. It
	// may replace s.Net (the local baselines train over self-loops only);
	// the run uses the network s holds when Plan returns.
	Plan(s *Setup) (ClientFactory, Program, error)
}

// Algorithms holds the training algorithms of `algorithm:`.
var Algorithms = registry.New[Algorithm]("algorithm", "kind")

// CanFloat32 is the capability an algorithm declares at registration
// (Algorithms.Register(name, doc, new, CanFloat32)) when it computes in
// float32 under `precision: float32`: its vectors and payloads in
// float32, what must stay float64 (push-sum's ω, counts, loss sums) in
// float64. A scenario asking float32 of another algorithm is refused.
const CanFloat32 = "float32"

// Setup is what a run has built for an algorithm.
type Setup struct {
	Net  *graph.Network
	Data []datasets.ClientData // by node; the server's (node 0) too
	// Model is the prototype; every client takes its own Clone.
	Model models.Bilevel[float64]
	X0    []float64 // common initial parameters (shared, read-only)
	Seed  uint64
	// Test pools the test data of every node, for evaluations of a global
	// model by a server (an oracle measurement, not part of the algorithm).
	Test *datasets.Dataset
	// Head names the model's head (a models.Heads kind) and HeadParams are
	// its parameters, for algorithms that treat parts of λ apart.
	Head       string
	HeadParams models.HeadParams
	// Sections gives read access to the top-level sections of the scenario
	// an algorithm takes its parameters from (see SectionOwner).
	Sections Sections
	// Float32, when not nil, asks for clients that compute in float32
	// (precision: float32; only for algorithms that declared CanFloat32).
	// Model and X0 stay the float64 prototype, which references (a dense
	// oracle) read.
	Float32 *Float32Setup
}

// Float32Setup is the float32 model of a float32 run.
type Float32Setup struct {
	Model models.Bilevel[float32] // prototype; every client takes its own Clone
	X0    []float32               // X0 rounded to float32 (shared, read-only)
}

// Env returns the environment of node self of the run, for what an
// algorithm builds per node (its Phase is nil).
func (s *Setup) Env(self int) Env { return Env{Seed: s.Seed, N: s.Net.N, Self: self} }

// SectionOwner is an Algorithm whose parameters are top-level sections of
// the scenario rather than keys under `algorithm:` (pdbo's sgp,
// hypergradient and outer, which the method presets fill in). A scenario
// whose algorithm does not own a section must leave it at its default.
type SectionOwner interface {
	// Sections returns the keys of the sections the algorithm owns.
	Sections() []string
}

// Sections is a read-only view of a scenario's top-level sections by key.
// Section returns a pointer to the section's value, whose type the
// algorithm family that owns it defines (the scenario embeds it), or nil
// for a key the scenario does not have. Algorithms must not modify it.
type Sections interface {
	Section(key string) any
}
