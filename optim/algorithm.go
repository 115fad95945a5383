package optim

import (
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
	// Plan returns the factory of the run's clients and its program.
	Plan(s *Setup) (ClientFactory, Program, error)
}

// Algorithms holds the training algorithms of `algorithm:`.
var Algorithms = registry.New[Algorithm]("algorithm", "kind")

// Setup is what a run has built for an algorithm.
type Setup struct {
	Net  *graph.Network
	Data []models.ClientData // by node; the server's (node 0) too
	// Model is the prototype; every client takes its own Clone.
	Model models.Bilevel
	X0    []float64 // common initial parameters (shared, read-only)
	Seed  uint64
	// Test pools the test data of every node, for evaluations of a global
	// model by a server (an oracle measurement, not part of the algorithm).
	Test *models.Dataset
	// PDBO is the configuration of the pdbo algorithm, whose parameters are
	// the scenario's sgp, hypergradient and outer sections.
	PDBO *PDBOSetup
}

// PDBOSetup configures the pdbo algorithm.
type PDBOSetup struct {
	Config  *PDBOConfig
	Program *Alg1
	// TrueP and TrueDelta, when not nil, are each client's exact p̄_i· and
	// δ̄_{·→i} (estimates: true).
	TrueP, TrueDelta [][]float64
}

func init() {
	Algorithms.Register("pdbo",
		"Personalized decentralized bilevel optimization (PDBO paper Alg. 1): SGP rounds (push-sum, Eq. 2–4, with Alg. 2's counts), a hyper-gradient phase (HGP, VR-HGP, exact backprop or local) and each client's λ-update, per outer step. Its parameters are the scenario's sgp, hypergradient and outer sections.",
		func() Algorithm { return &pdboAlgorithm{} })
}

// pdboAlgorithm is the default algorithm.
type pdboAlgorithm struct{}

func (*pdboAlgorithm) Server() bool       { return false }
func (*pdboAlgorithm) Validate(int) error { return nil }

func (*pdboAlgorithm) Plan(s *Setup) (ClientFactory, Program, error) {
	p := s.PDBO
	factory := func(i int) (Client, error) {
		c := NewPDBOClient(i, p.Config, s.Model.Clone(), s.Data[i], s.X0)
		if p.TrueP != nil {
			c.UseTrueEstimates(p.TrueP[i], p.TrueDelta[i])
		}
		return c, nil
	}
	return factory, p.Program, nil
}
