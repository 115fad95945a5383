package graph

import (
	"fmt"
	"math/bits"

	"hgpsim/internal/registry"
)

// The hypercube is the worked example of docs/extending.md: a topology
// written against the exported surface of the package only (Topology,
// Network, RandomLinks, the registries), as one could write it outside.

func init() {
	Topologies.Register("hypercube",
		"A d-dimensional hypercube on n = 2^d nodes: node i is linked with the d nodes whose index differs from i in exactly one bit, each undirected link up with probability prob per round. Every node has log₂ n neighbours and any two are at most log₂ n hops apart.",
		func() Topology {
			return &Hypercube{Prob: 1, RandomLinks: RandomLinks{Process: registry.Choose[LinkProcess]("bernoulli")}}
		})
}

// MaxHypercubeDim is the largest dimension whose 2^d nodes fit
// MaxSparseNodes.
const MaxHypercubeDim = 19

// Hypercube links the nodes whose indices differ in one bit.
type Hypercube struct {
	Dim         int     `yaml:"dim" doc:"dimension d, 1 … 19, with 2^d = the number of nodes; 0: log₂ of the number of nodes"`
	Prob        float64 `yaml:"prob" doc:"per-round probability that a link is up, in (0, 1]"`
	RandomLinks `yaml:",inline"`
}

// Example implements registry.Exampler: a small run needs a power of two
// nodes.
func (*Hypercube) Example() string {
	return "clients: 8\nnetwork: {kind: hypercube, prob: 0.7}\nsgp: {rounds: 30, eval_every: 10}\n"
}

// dim returns d for n nodes.
func (h *Hypercube) dim(n int) (int, error) {
	if n < 2 {
		return 0, fmt.Errorf("a hypercube needs at least 2 nodes, got %d", n)
	}
	if n&(n-1) != 0 {
		lo := 1 << (bits.Len(uint(n)) - 1)
		return 0, fmt.Errorf("a hypercube has a power of two nodes, got %d (%d or %d would do)", n, lo, 2*lo)
	}
	d := bits.TrailingZeros(uint(n))
	switch {
	case h.Dim < 0 || h.Dim > MaxHypercubeDim:
		return 0, fmt.Errorf("dim must be in [0, %d], got %d", MaxHypercubeDim, h.Dim)
	case h.Dim != 0 && h.Dim != d:
		return 0, fmt.Errorf("dim %d means %d nodes, got %d", h.Dim, 1<<h.Dim, n)
	}
	return d, nil
}

// Validate implements Topology.
func (h *Hypercube) Validate(n int) error {
	if _, err := h.dim(n); err != nil {
		return err
	}
	if !(h.Prob > 0 && h.Prob <= 1) {
		return fmt.Errorf("prob must be in (0, 1], got %g", h.Prob)
	}
	if p := h.Process.Params; p != nil {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("links %s: %w", h.Process.Name, err)
		}
	}
	return nil
}

// UpFraction implements UpFraction: every link is up with prob.
func (h *Hypercube) UpFraction() float64 { return h.Prob }

// LinkCount implements Topology: d links out of each node.
func (h *Hypercube) LinkCount(n int) int64 {
	return int64(n) * int64(bits.Len(uint(n-1)))
}

// OneWay implements Topology: both directions of a link fail together.
func (h *Hypercube) OneWay() bool { return false }

// ConnectedByConstruction implements ConnectedByConstruction: flipping the
// differing bits one at a time walks from any node to any other.
func (h *Hypercube) ConnectedByConstruction() bool { return true }

// Sparse implements Sparse: log₂ n links a node.
func (h *Hypercube) Sparse() bool { return true }

// Build implements Topology.
func (h *Hypercube) Build(n int, _ uint64) (*Network, error) {
	d, err := h.dim(n)
	if err != nil {
		return nil, err
	}
	nw := newSparseNetwork(n, h.Process.Params)
	nw.Symmetric = true
	for i := range n {
		for b := range d {
			nw.setLink(i, i^(1<<b), h.Prob)
		}
	}
	return nw, nil
}
