package graph

import (
	"fmt"

	"hgpsim/internal/registry"
)

// MaxNodes bounds the number of nodes of a dense topology. Its expected
// graph is stored densely (δ̄ for every ordered pair), so n nodes cost at
// least 8·n² bytes: 800 MB at the bound. Sparse topologies go up to
// MaxSparseNodes.
const MaxNodes = 10000

// Topology is a network kind of the scenario's `network` section: its
// parameters (a struct with yaml and doc tags) and how to build the
// expected graph from them. See Topologies.
type Topology interface {
	// Validate checks the parameters for n nodes without building
	// anything of size n².
	Validate(n int) error
	// Build returns the expected graph for n nodes (2 ≤ n ≤ MaxNodesOf, the
	// parameters validated), drawing any random structure from the
	// PurposeTopology stream of seed. Build need not set Kind, N, Seed or
	// check Assumptions 2 and 6: the package-level Build does.
	Build(n int, seed uint64) (*Network, error)
	// LinkCount returns the number of directed links between distinct nodes
	// of the expected graph, or an upper bound, without building it.
	LinkCount(n int) int64
	// OneWay reports whether the two directions of a link are realized
	// independently (a directed network) rather than together.
	OneWay() bool
}

// UpFraction is implemented by topologies whose links are up only part of
// the time: the mean of their links' δ̄, so that about LinkCount·UpFraction
// links carry a message in a round (every link process keeps δ̄ as a
// link's long-run rate, fading lowers it). Work estimates use it; memory
// estimates keep LinkCount, since any link may be up.
type UpFraction interface {
	UpFraction() float64
}

// ConnectedByConstruction is implemented by topologies whose expected
// graph meets Assumptions 2 and 6 for every valid parameter set, so that
// validation need not build it (which costs O(n²) time and memory).
type ConnectedByConstruction interface {
	ConnectedByConstruction() bool
}

// Topologies holds the network kinds, selected by `network.kind`.
var Topologies = registry.New[Topology]("network", "kind")

// LinkProcess decides, round by round, whether a link of the expected graph
// is up: it realizes δ⁽ᵗ⁾ given δ̄. See LinkProcesses.
type LinkProcess interface {
	// Validate checks the parameters.
	Validate() error
	// Up reports whether the link keyed (a, b) — the ordered pair in a
	// directed network, the sorted pair in a symmetric one — with per-round
	// probability 0 < p < 1 is up at tick. It must be a pure function of
	// its arguments (see Network.Realize for why), and P(up) must be p at
	// every tick, so that δ̄ keeps its meaning — except in a process that
	// replays data (a Binder, like trace), whose frequencies are the data's.
	Up(seed uint64, a, b int, p float64, tick uint64) bool
}

// LinkProcesses holds the edge processes, selected by `network.links`.
var LinkProcesses = registry.New[LinkProcess]("links", "kind")

// Build constructs the network of a chosen topology for n nodes. seed keys
// both the topology's own draws (the PurposeTopology stream) and the
// per-round link realizations (Network.Seed). The result has passed
// Validate (Assumptions 2 and 6).
func Build(t registry.Choice[Topology], n int, seed uint64) (*Network, error) {
	if t.Params == nil {
		return nil, fmt.Errorf("graph: no topology chosen")
	}
	if most := MaxNodesOf(t.Params); n < 2 || n > most {
		return nil, fmt.Errorf("graph: n must be in [2, %d], got %d (kind %s)", most, n, t.Name)
	}
	if err := t.Params.Validate(n); err != nil {
		return nil, fmt.Errorf("graph: %s: %w", t.Name, err)
	}
	nw, err := t.Params.Build(n, seed)
	if err != nil {
		return nil, fmt.Errorf("graph: %s: %w", t.Name, err)
	}
	nw.Kind, nw.N, nw.Seed = t.Name, n, seed
	if nw.Process == nil {
		nw.Process = &Bernoulli{}
	}
	if nw.Prob == nil && nw.out != nil {
		nw.sortLinks()
	}
	if err := nw.Validate(); err != nil {
		return nil, fmt.Errorf("%w (kind %s)", err, t.Name)
	}
	nw.index()
	if b, ok := nw.Process.(Binder); ok {
		p, err := b.Bind(nw)
		if err != nil {
			return nil, fmt.Errorf("graph: %s: links: %w", t.Name, err)
		}
		nw.Process = p
	}
	if lv, ok := nw.Process.(interface{ ValidateLink(p float64) error }); ok {
		for i, ps := range nw.outProb {
			for k, p := range ps {
				if p > 0 && p < 1 {
					if err := lv.ValidateLink(p); err != nil {
						return nil, fmt.Errorf("graph: %s: links of %s: link %d→%d: %w", t.Name, "the process", i, nw.out[i][k], err)
					}
				}
			}
		}
	}
	return nw, nil
}

// RandomLinks is the `links` parameter of the kinds whose links fail at
// random; they embed it inline.
type RandomLinks struct {
	Process registry.Choice[LinkProcess] `yaml:"links" doc:"edge process realizing δ⁽ᵗ⁾ each round (see the links kinds)"`
}

// Links returns the chosen link process (the topologies that embed
// RandomLinks have it).
func (l *RandomLinks) Links() registry.Choice[LinkProcess] { return l.Process }

func defaultLinks() RandomLinks {
	return RandomLinks{Process: registry.Choose[LinkProcess]("bernoulli")}
}

// validate checks the chosen process (none chosen: Bernoulli).
func (l *RandomLinks) validate() error {
	if l.Process.Params == nil {
		return nil
	}
	if err := l.Process.Params.Validate(); err != nil {
		return fmt.Errorf("links %s: %w", l.Process.Name, err)
	}
	return nil
}

// newNetwork returns an n-node network with only self-loops and the
// chosen edge process, stored densely.
func (l *RandomLinks) newNetwork(n int) *Network {
	return &Network{N: n, Prob: identity(n), Process: l.Process.Params}
}

// newSparse is newNetwork on adjacency lists, for sparse topologies.
func (l *RandomLinks) newSparse(n int) *Network { return newSparseNetwork(n, l.Process.Params) }

// probability checks p ∈ (0, 1].
func probability(name string, p float64) error {
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("%s must be in (0, 1], got %g", name, p)
	}
	return nil
}

// identity returns an n×n matrix with a unit diagonal: every client reaches
// itself with probability 1.
func identity(n int) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		m[i][i] = 1
	}
	return m
}

func dense(n int) int64 { return int64(n) * int64(n-1) }
