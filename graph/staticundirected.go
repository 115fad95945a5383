package graph

import (
	"fmt"
	"math/rand/v2"

	"hgpsim/internal/rng"
)

func init() {
	Topologies.Register("static-undirected",
		"An Erdős–Rényi graph G(n, edge_prob) with self-loops, redrawn until connected, whose links never fail, with fixed doubly stochastic mixing weights: SGP becomes DSGD (PDBO paper App. D, FixU). FMMC, the fastest-mixing Markov chain the paper's authors used, minimizes the second-largest eigenvalue modulus; Metropolis–Hastings needs only the neighbours' degrees.",
		func() Topology { return &StaticUndirected{EdgeProb: 0.4, Weights: "fmmc"} })
}

// MaxFMMCNodes bounds the size for which fastest-mixing weights are
// computed: each iteration of the projected subgradient method needs an
// eigendecomposition, O(n³).
const MaxFMMCNodes = 1000

// maxResamples bounds the search for a connected Erdős–Rényi graph; with a
// p far below ln(N)/N nearly every draw is disconnected and the search would
// otherwise never end.
const maxResamples = 1000

// StaticUndirected is a connected Erdős–Rényi graph with fixed weights.
type StaticUndirected struct {
	EdgeProb float64 `yaml:"edge_prob" doc:"Erdős–Rényi edge probability p, in (0, 1]"`
	Weights  string  `yaml:"weights" doc:"mixing weights: fmmc (fastest-mixing, n ≤ 1000) or metropolis"`
}

// Validate implements Topology.
func (s *StaticUndirected) Validate(n int) error {
	if err := probability("edge_prob", s.EdgeProb); err != nil {
		return err
	}
	switch s.Weights {
	case "fmmc":
		if n > MaxFMMCNodes {
			return fmt.Errorf("weights fmmc is computed for at most %d nodes (O(n³) per iteration), got %d; use weights: metropolis", MaxFMMCNodes, n)
		}
	case "metropolis":
	default:
		return fmt.Errorf(`weights must be "fmmc" or "metropolis", got %q`, s.Weights)
	}
	return nil
}

// LinkCount implements Topology: the expected number of links.
func (s *StaticUndirected) LinkCount(n int) int64 { return int64(s.EdgeProb*float64(dense(n))) + 1 }

// Build implements Topology.
func (s *StaticUndirected) Build(n int, seed uint64) (*Network, error) {
	r := rng.New(seed, rng.Global, rng.PurposeTopology)
	var edges [][2]int
	for try := 0; ; try++ {
		if try == maxResamples {
			return nil, fmt.Errorf("no connected Erdős–Rényi graph with n=%d and edge_prob=%g in %d draws; raise edge_prob",
				n, s.EdgeProb, maxResamples)
		}
		edges = drawErdosRenyi(edges[:0], n, s.EdgeProb, r)
		if connected(n, edges) {
			break
		}
	}
	nw := &Network{N: n, Prob: identity(n), Symmetric: true}
	for _, e := range edges {
		nw.Prob[e[0]][e[1]] = 1
		nw.Prob[e[1]][e[0]] = 1
	}
	if s.Weights == "metropolis" {
		nw.Mixing = metropolis(n, edges)
	} else {
		nw.Mixing = fastestMixing(n, edges)
	}
	return nw, nil
}

// drawErdosRenyi appends to dst the pairs i < j of G(n, p), drawn in a fixed
// pair order so that the graph depends on the seed alone.
func drawErdosRenyi(dst [][2]int, n int, p float64, r *rand.Rand) [][2]int {
	for i := range n {
		for j := i + 1; j < n; j++ {
			if r.Float64() < p {
				dst = append(dst, [2]int{i, j})
			}
		}
	}
	return dst
}

// connected reports whether the undirected graph on n nodes is connected.
func connected(n int, edges [][2]int) bool {
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	parts := n
	for _, e := range edges {
		if a, b := find(e[0]), find(e[1]); a != b {
			parent[a] = b
			parts--
		}
	}
	return parts == 1
}

// OneWay implements Topology.
func (s *StaticUndirected) OneWay() bool { return false }
