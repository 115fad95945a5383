package graph

func init() {
	Topologies.Register("ring",
		"Node i is linked with i−1 and i+1 (mod n), each link up with probability prob per round. directed: true keeps only i→i+1, which breaks Assumption 6 and is refused — it exists so that error is explicit.",
		func() Topology { return &Ring{Prob: 1, RandomLinks: defaultLinks()} })
}

// Ring links i with i±1 mod n, or only i → i+1 mod n when directed.
type Ring struct {
	Prob        float64 `yaml:"prob" doc:"per-round probability that a link is up, in (0, 1]"`
	Directed    bool    `yaml:"directed" doc:"one-directional ring (refused: Assumption 6)"`
	RandomLinks `yaml:",inline"`
}

// Validate implements Topology.
func (r *Ring) Validate(int) error {
	if err := probability("prob", r.Prob); err != nil {
		return err
	}
	return r.RandomLinks.validate()
}

// UpFraction implements UpFraction: every link is up with prob.
func (r *Ring) UpFraction() float64 { return r.Prob }

// LinkCount implements Topology.
func (r *Ring) LinkCount(n int) int64 { return 2 * int64(n) }

// Build implements Topology.
func (r *Ring) Build(n int, _ uint64) (*Network, error) {
	nw := r.newSparse(n)
	nw.Symmetric = !r.Directed
	for i := range n {
		next := (i + 1) % n
		nw.setLink(i, next, r.Prob)
		if !r.Directed {
			nw.setLink(next, i, r.Prob)
		}
	}
	return nw, nil
}

// OneWay implements Topology.
func (r *Ring) OneWay() bool { return r.Directed }

// Sparse implements Sparse: two links a node.
func (r *Ring) Sparse() bool { return true }

// ConnectedByConstruction implements ConnectedByConstruction.
func (r *Ring) ConnectedByConstruction() bool { return !r.Directed }
