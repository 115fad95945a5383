package graph

import (
	"fmt"
	"math/rand/v2"

	"hgpsim/internal/rng"
)

// Topology kinds accepted by Build in Spec.Kind.
const (
	kindFullyConnected       = "fully-connected"
	kindStaticUndirected     = "static-undirected"
	kindStochasticUndirected = "stochastic-undirected"
	kindStochasticDirected   = "stochastic-directed"
	kindRing                 = "ring"
	kindStar                 = "star"
	kindEdgeList             = "edge-list"

	weightsFMMC       = "fmmc"
	weightsMetropolis = "metropolis"
)

// maxClients bounds N so that a typo in a scenario file fails with an error
// instead of allocating an N×N matrix that does not fit in memory.
const maxClients = 10000

// maxResamples bounds the search for a connected Erdős–Rényi graph; with a
// p far below ln(N)/N nearly every draw is disconnected and the search would
// otherwise never end.
const maxResamples = 1000

// Spec describes a topology as a scenario file gives it. The caller fills in
// defaults, but Build validates every field the kind uses and returns an
// error, never panics, on a bad value. Fields a kind does not use are
// ignored.
type Spec struct {
	// Kind is one of "fully-connected", "static-undirected",
	// "stochastic-undirected", "stochastic-directed", "ring", "star" and
	// "edge-list".
	Kind string
	// N is the number of clients, at least 2.
	N int
	// EdgeProb is the Erdős–Rényi edge probability of static-undirected, in
	// (0, 1] (the paper uses 0.4).
	EdgeProb float64
	// Weights selects the static-undirected mixing matrix: "fmmc" (the
	// fastest-mixing Markov chain, default; "" means the default) or
	// "metropolis" (Metropolis–Hastings).
	Weights string
	// DeltaMin and DeltaMax bound the uniform distribution from which δ̄ is
	// drawn once per edge in the stochastic-* kinds (the paper uses 0.4 and
	// 0.8); 0 < DeltaMin <= DeltaMax <= 1.
	DeltaMin, DeltaMax float64
	// Prob is the per-round up probability of each link of ring and star,
	// in (0, 1].
	Prob float64
	// Directed makes a ring one-directional, i → i+1 mod N. Such a ring
	// satisfies Assumption 2 but not Assumption 6, so Build rejects it for
	// N > 2; it exists to show that error.
	Directed bool
	// Edges lists the links of edge-list, each with its up probability.
	Edges []Edge
	// Symmetric makes edge-list undirected: each listed {From, To} is one
	// link realized in both directions together.
	Symmetric bool
	// Burst is the length in rounds of the blocks during which a link keeps
	// its state (0 or 1: a fresh draw every round). Any kind.
	Burst int
}

// Build constructs the network described by spec. seed keys both the
// topology draw (the PurposeTopology stream) and the per-round edge
// realizations (Network.Seed, used with PurposeEdges). The result has passed
// Validate.
func Build(spec Spec, seed uint64) (*Network, error) {
	n := spec.N
	if n < 2 || n > maxClients {
		return nil, fmt.Errorf("graph: n must be in [2, %d], got %d", maxClients, n)
	}
	if spec.Burst < 0 {
		return nil, fmt.Errorf("graph: burst must be >= 0 rounds, got %d", spec.Burst)
	}
	nw := &Network{Kind: spec.Kind, N: n, Seed: seed, Prob: identity(n), Burst: spec.Burst}
	var err error
	switch spec.Kind {
	case kindFullyConnected:
		buildFullyConnected(nw)
	case kindStaticUndirected:
		err = buildStaticUndirected(nw, spec, seed)
	case kindStochasticUndirected, kindStochasticDirected:
		err = buildStochastic(nw, spec, seed)
	case kindRing:
		err = buildRing(nw, spec)
	case kindStar:
		err = buildStar(nw, spec)
	case kindEdgeList:
		err = buildEdgeList(nw, spec)
	default:
		return nil, fmt.Errorf("graph: unknown kind %q, want one of %q, %q, %q, %q, %q, %q, %q",
			spec.Kind, kindFullyConnected, kindStaticUndirected, kindStochasticUndirected,
			kindStochasticDirected, kindRing, kindStar, kindEdgeList)
	}
	if err != nil {
		return nil, err
	}
	if err := nw.Validate(); err != nil {
		return nil, fmt.Errorf("%w (kind %s)", err, spec.Kind)
	}
	nw.index()
	return nw, nil
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

// buildFullyConnected links every pair at every round and averages over all
// clients, which turns SGP into FedAvg (Sec. 2).
func buildFullyConnected(nw *Network) {
	nw.Symmetric = true
	nw.Mixing = make([][]float64, nw.N)
	for i := range nw.N {
		nw.Mixing[i] = make([]float64, nw.N)
		for j := range nw.N {
			nw.Prob[i][j] = 1
			nw.Mixing[i][j] = 1 / float64(nw.N)
		}
	}
}

// buildStaticUndirected draws an Erdős–Rényi graph G(N, EdgeProb), redrawing
// until it is connected, and fixes doubly stochastic mixing weights on it
// (App. D, FixU).
func buildStaticUndirected(nw *Network, spec Spec, seed uint64) error {
	p := spec.EdgeProb
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("graph: edge_prob must be in (0, 1], got %g", p)
	}
	weights := spec.Weights
	if weights == "" {
		weights = weightsFMMC
	}
	if weights != weightsFMMC && weights != weightsMetropolis {
		return fmt.Errorf("graph: weights must be %q or %q, got %q", weightsFMMC, weightsMetropolis, spec.Weights)
	}
	r := rng.New(seed, rng.Global, rng.PurposeTopology)
	var edges [][2]int
	for try := 0; ; try++ {
		if try == maxResamples {
			return fmt.Errorf("graph: no connected Erdős–Rényi graph with n=%d and edge_prob=%g in %d draws; raise edge_prob",
				nw.N, p, maxResamples)
		}
		edges = drawErdosRenyi(edges[:0], nw.N, p, r)
		if connected(nw.N, edges) {
			break
		}
	}
	nw.Symmetric = true
	for _, e := range edges {
		nw.Prob[e[0]][e[1]] = 1
		nw.Prob[e[1]][e[0]] = 1
	}
	if weights == weightsMetropolis {
		nw.Mixing = metropolis(nw.N, edges)
	} else {
		nw.Mixing = fastestMixing(nw.N, edges)
	}
	return nil
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

// buildStochastic makes every pair a potential link with δ̄ drawn once from
// U[DeltaMin, DeltaMax] (App. D, StoU and StoD): one draw per unordered pair
// for stochastic-undirected, one per ordered pair for stochastic-directed.
func buildStochastic(nw *Network, spec Spec, seed uint64) error {
	lo, hi := spec.DeltaMin, spec.DeltaMax
	if !(lo > 0 && lo <= 1) {
		return fmt.Errorf("graph: delta_min must be in (0, 1], got %g", lo)
	}
	if !(hi >= lo && hi <= 1) {
		return fmt.Errorf("graph: delta_max must be in [delta_min, 1] = [%g, 1], got %g", lo, hi)
	}
	r := rng.New(seed, rng.Global, rng.PurposeTopology)
	draw := func() float64 { return lo + (hi-lo)*r.Float64() }
	nw.Symmetric = spec.Kind == kindStochasticUndirected
	for i := range nw.N {
		for j := range nw.N {
			switch {
			case i == j:
			case nw.Symmetric && j > i:
				d := draw()
				nw.Prob[i][j], nw.Prob[j][i] = d, d
			case !nw.Symmetric:
				nw.Prob[i][j] = draw()
			}
		}
	}
	return nil
}

// buildRing links i with i±1 mod N, or only i → i+1 mod N when directed.
func buildRing(nw *Network, spec Spec) error {
	p := spec.Prob
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("graph: prob must be in (0, 1], got %g", p)
	}
	nw.Symmetric = !spec.Directed
	for i := range nw.N {
		next := (i + 1) % nw.N
		nw.Prob[i][next] = p
		if !spec.Directed {
			nw.Prob[next][i] = p
		}
	}
	return nil
}

// buildStar links hub 0 with every other client, undirected.
func buildStar(nw *Network, spec Spec) error {
	p := spec.Prob
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("graph: prob must be in (0, 1], got %g", p)
	}
	nw.Symmetric = true
	for k := 1; k < nw.N; k++ {
		nw.Prob[0][k], nw.Prob[k][0] = p, p
	}
	return nil
}

// buildEdgeList takes the links from spec.Edges.
func buildEdgeList(nw *Network, spec Spec) error {
	if len(spec.Edges) == 0 {
		return fmt.Errorf("graph: edge-list needs at least one edge in edges")
	}
	nw.Symmetric = spec.Symmetric
	first := make(map[[2]int]int, len(spec.Edges)) // link → index of its first listing
	for k, e := range spec.Edges {
		for _, v := range [2]int{e.From, e.To} {
			if v < 0 || v >= nw.N {
				return fmt.Errorf("graph: edges[%d] %d→%d: client %d is not in [0, %d)", k, e.From, e.To, v, nw.N)
			}
		}
		if e.From == e.To {
			return fmt.Errorf("graph: edges[%d] is a self edge %d→%d; self-loops are implicit, list only links between clients", k, e.From, e.To)
		}
		if !(e.Prob > 0 && e.Prob <= 1) {
			return fmt.Errorf("graph: edges[%d] %d→%d: prob must be in (0, 1], got %g", k, e.From, e.To, e.Prob)
		}
		key := [2]int{e.From, e.To}
		if spec.Symmetric && key[1] < key[0] {
			key[0], key[1] = key[1], key[0]
		}
		if prev, dup := first[key]; dup {
			return fmt.Errorf("graph: edges[%d] %d→%d duplicates edges[%d]", k, e.From, e.To, prev)
		}
		first[key] = k
		nw.Prob[e.From][e.To] = e.Prob
		if spec.Symmetric {
			nw.Prob[e.To][e.From] = e.Prob
		}
	}
	return nil
}
