package graph

import (
	"fmt"

	"hgpsim/internal/rng"
)

func init() {
	Topologies.Register("stochastic-undirected",
		"Every pair {i, j} is a link with δ̄ drawn once from U[delta_min, delta_max]; both directions are up or down together each round (PDBO paper App. D, StoU; the paper uses [0.4, 0.8]).",
		func() Topology { return &Stochastic{DeltaMin: 0.4, DeltaMax: 0.8, RandomLinks: defaultLinks()} })
	Topologies.Register("stochastic-directed",
		"Every ordered pair i→j is a link with its own δ̄ drawn once from U[delta_min, delta_max], realized independently of j→i each round (PDBO paper App. D, StoD; the paper uses [0.4, 0.8]).",
		func() Topology {
			return &Stochastic{DeltaMin: 0.4, DeltaMax: 0.8, Directed: true, RandomLinks: defaultLinks()}
		})
}

// Stochastic makes every pair a potential link with δ̄ ~ U[DeltaMin,
// DeltaMax]: one draw per unordered pair (undirected) or per ordered pair
// (directed), in a fixed pair order from the PurposeTopology stream.
type Stochastic struct {
	DeltaMin    float64 `yaml:"delta_min" doc:"lower end of the U[delta_min, delta_max] draw of each link's δ̄, in (0, 1]"`
	DeltaMax    float64 `yaml:"delta_max" doc:"upper end, in [delta_min, 1]"`
	Directed    bool    `yaml:"-"`
	RandomLinks `yaml:",inline"`
}

// Validate implements Topology.
func (s *Stochastic) Validate(int) error {
	if err := probability("delta_min", s.DeltaMin); err != nil {
		return err
	}
	if !(s.DeltaMax >= s.DeltaMin && s.DeltaMax <= 1) {
		return fmt.Errorf("delta_max must be in [delta_min, 1] = [%g, 1], got %g", s.DeltaMin, s.DeltaMax)
	}
	return s.RandomLinks.validate()
}

// UpFraction implements UpFraction: the mean of U[delta_min, delta_max].
func (s *Stochastic) UpFraction() float64 { return (s.DeltaMin + s.DeltaMax) / 2 }

// LinkCount implements Topology.
func (s *Stochastic) LinkCount(n int) int64 { return dense(n) }

// Build implements Topology.
func (s *Stochastic) Build(n int, seed uint64) (*Network, error) {
	r := rng.New(seed, rng.Global, rng.PurposeTopology)
	lo, hi := s.DeltaMin, s.DeltaMax
	draw := func() float64 { return lo + (hi-lo)*r.Float64() }
	nw := s.newNetwork(n)
	nw.Symmetric = !s.Directed
	for i := range n {
		for j := range n {
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
	return nw, nil
}

// OneWay implements Topology.
func (s *Stochastic) OneWay() bool { return s.Directed }

// ConnectedByConstruction implements ConnectedByConstruction.
func (s *Stochastic) ConnectedByConstruction() bool { return true }
