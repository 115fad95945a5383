package graph

func init() {
	Topologies.Register("star",
		"Hub 0 is linked with every other node, each undirected link up with probability prob per round.",
		func() Topology { return &Star{Prob: 1, RandomLinks: defaultLinks()} })
}

// Star links hub 0 with every other node, undirected.
type Star struct {
	Prob        float64 `yaml:"prob" doc:"per-round probability that a link is up, in (0, 1]"`
	RandomLinks `yaml:",inline"`
}

// Validate implements Topology.
func (s *Star) Validate(int) error {
	if err := probability("prob", s.Prob); err != nil {
		return err
	}
	return s.RandomLinks.validate()
}

// LinkCount implements Topology.
func (s *Star) LinkCount(n int) int64 { return 2 * int64(n-1) }

// Build implements Topology.
func (s *Star) Build(n int, _ uint64) (*Network, error) {
	nw := s.newNetwork(n)
	nw.Symmetric = true
	for k := 1; k < n; k++ {
		nw.Prob[0][k], nw.Prob[k][0] = s.Prob, s.Prob
	}
	return nw, nil
}

// OneWay implements Topology.
func (s *Star) OneWay() bool { return false }

// ConnectedByConstruction implements ConnectedByConstruction.
func (s *Star) ConnectedByConstruction() bool { return true }
