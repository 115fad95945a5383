package graph

import "fmt"

func init() {
	Topologies.Register("star",
		"Hub 0 is linked with every other node, each link up with probability prob per round; to_hub and from_hub set the two directions apart (e.g. lost uploads to a server at the hub), which makes the network directed.",
		func() Topology { return &Star{Prob: 1, RandomLinks: defaultLinks()} })
}

// Star links hub 0 with every other node.
type Star struct {
	Prob        float64 `yaml:"prob" doc:"per-round probability that a link is up, in (0, 1]"`
	ToHub       float64 `yaml:"to_hub" doc:"probability of the links toward the hub (uploads), in (0, 1]; 0 means prob"`
	FromHub     float64 `yaml:"from_hub" doc:"probability of the links from the hub (downloads), in (0, 1]; 0 means prob"`
	RandomLinks `yaml:",inline"`
}

func (s *Star) directions() (to, from float64) {
	to, from = s.ToHub, s.FromHub
	if to == 0 {
		to = s.Prob
	}
	if from == 0 {
		from = s.Prob
	}
	return to, from
}

// Validate implements Topology.
func (s *Star) Validate(int) error {
	if err := probability("prob", s.Prob); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"to_hub", s.ToHub}, {"from_hub", s.FromHub}} {
		if c.v != 0 {
			if err := probability(c.name, c.v); err != nil {
				return fmt.Errorf("%w (or 0 for prob)", err)
			}
		}
	}
	return s.RandomLinks.validate()
}

// UpFraction implements UpFraction: every link is up with prob.
func (s *Star) UpFraction() float64 { return s.Prob }

// LinkCount implements Topology.
func (s *Star) LinkCount(n int) int64 { return 2 * int64(n-1) }

// OneWay implements Topology: the two directions are realized apart when
// their probabilities differ.
func (s *Star) OneWay() bool {
	to, from := s.directions()
	return to != from
}

// ConnectedByConstruction implements ConnectedByConstruction.
func (s *Star) ConnectedByConstruction() bool { return true }

// Sparse implements Sparse: 2(n − 1) links in all.
func (s *Star) Sparse() bool { return true }

// Build implements Topology.
func (s *Star) Build(n int, _ uint64) (*Network, error) {
	nw := s.newSparse(n)
	to, from := s.directions()
	nw.Symmetric = to == from
	for k := 1; k < n; k++ {
		nw.setLink(0, k, from)
		nw.setLink(k, 0, to)
	}
	return nw, nil
}
