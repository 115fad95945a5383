package graph

import "fmt"

func init() {
	Topologies.Register("edge-list",
		"The links listed in edges, each with its own per-round probability; symmetric: true makes every listed link undirected (both directions realized together). Self-loops are implicit.",
		func() Topology { return &EdgeList{RandomLinks: defaultLinks()} })
}

// EdgeList takes the links from a list.
type EdgeList struct {
	Symmetric   bool   `yaml:"symmetric" doc:"each listed link is undirected, realized in both directions together"`
	Edges       []Edge `yaml:"edges" doc:"links {from, to, prob}: nodes in [0, n), prob in (0, 1] (default 1), no self-loops, no duplicates"`
	RandomLinks `yaml:",inline"`
}

// Example implements registry.Exampler: an edge list has no default edges.
func (*EdgeList) Example() string {
	return `clients: 4
network:
  kind: edge-list
  symmetric: true
  edges: [{from: 0, to: 1}, {from: 1, to: 2, prob: 0.5}, {from: 2, to: 3}, {from: 3, to: 0, prob: 0.8}]
sgp: {rounds: 30, eval_every: 10}
`
}

// Validate implements Topology.
func (e *EdgeList) Validate(n int) error {
	if len(e.Edges) == 0 {
		return fmt.Errorf("edges: an edge-list network needs at least one edge")
	}
	if int64(len(e.Edges)) > dense(n) {
		return fmt.Errorf("edges: %d edges for %d nodes, at most n(n−1) = %d are possible", len(e.Edges), n, dense(n))
	}
	first := make(map[[2]int]int, len(e.Edges)) // link → index of its first listing
	for k, ed := range e.Edges {
		for _, v := range [2]int{ed.From, ed.To} {
			if v < 0 || v >= n {
				return fmt.Errorf("edges[%d] %d→%d: client %d is not in [0, %d)", k, ed.From, ed.To, v, n)
			}
		}
		if ed.From == ed.To {
			return fmt.Errorf("edges[%d] is a self edge %d→%d; self-loops are implicit, list only links between clients", k, ed.From, ed.To)
		}
		if err := probability(fmt.Sprintf("edges[%d] %d→%d: prob", k, ed.From, ed.To), ed.Prob); err != nil {
			return err
		}
		key := [2]int{ed.From, ed.To}
		if e.Symmetric && key[1] < key[0] {
			key[0], key[1] = key[1], key[0]
		}
		if prev, dup := first[key]; dup {
			return fmt.Errorf("edges[%d] %d→%d duplicates edges[%d]", k, ed.From, ed.To, prev)
		}
		first[key] = k
	}
	return e.RandomLinks.validate()
}

// LinkCount implements Topology.
func (e *EdgeList) LinkCount(int) int64 { return 2 * int64(len(e.Edges)) }

// Build implements Topology.
func (e *EdgeList) Build(n int, _ uint64) (*Network, error) {
	nw := e.newSparse(n)
	nw.Symmetric = e.Symmetric
	for _, ed := range e.Edges {
		nw.setLink(ed.From, ed.To, ed.Prob)
		if e.Symmetric {
			nw.setLink(ed.To, ed.From, ed.Prob)
		}
	}
	return nw, nil
}

// Sparse implements Sparse: the links listed.
func (e *EdgeList) Sparse() bool { return true }

// OneWay implements Topology.
func (e *EdgeList) OneWay() bool { return !e.Symmetric }
