package graph

import (
	"fmt"
	"slices"

	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
)

func init() {
	Topologies.Register("sparse-stochastic",
		"Any topology as the support, each of its links with its own δ̄ drawn once from U[delta_min, delta_max] — a sparse stochastic network (stochastic-* kinds are complete graphs). directed: true draws the two directions of a link apart and realizes them independently. The support's own probabilities and weights are replaced.",
		func() Topology {
			return &SparseStochastic{Support: registry.Choose[Topology]("ring"), DeltaMin: 0.4, DeltaMax: 0.8, RandomLinks: defaultLinks()}
		})
}

// SparseStochastic redraws the link probabilities of a support topology.
type SparseStochastic struct {
	Support     registry.Choice[Topology] `yaml:"support" doc:"the topology whose links are used (its parameters below it, e.g. {kind: torus, rows: 4})"`
	DeltaMin    float64                   `yaml:"delta_min" doc:"lower end of each link's δ̄ ~ U[delta_min, delta_max], in (0, 1]"`
	DeltaMax    float64                   `yaml:"delta_max" doc:"upper end, in [delta_min, 1]"`
	Directed    bool                      `yaml:"directed" doc:"draw and realize the two directions of a link apart"`
	RandomLinks `yaml:",inline"`
}

// Validate implements Topology.
func (s *SparseStochastic) Validate(n int) error {
	if s.Support.Params == nil {
		return fmt.Errorf("support: no topology chosen")
	}
	if s.Support.Name == "sparse-stochastic" {
		return fmt.Errorf("support: sparse-stochastic cannot be its own support")
	}
	if err := s.Support.Params.Validate(n); err != nil {
		return fmt.Errorf("support (%s): %w", s.Support.Name, err)
	}
	if err := probability("delta_min", s.DeltaMin); err != nil {
		return err
	}
	if !(s.DeltaMax >= s.DeltaMin && s.DeltaMax <= 1) {
		return fmt.Errorf("delta_max must be in [delta_min, 1] = [%g, 1], got %g", s.DeltaMin, s.DeltaMax)
	}
	return s.RandomLinks.validate()
}

// UpFraction implements UpFraction: the mean of U[delta_min, delta_max].
func (s *SparseStochastic) UpFraction() float64 { return (s.DeltaMin + s.DeltaMax) / 2 }

// LinkCount implements Topology.
func (s *SparseStochastic) LinkCount(n int) int64 { return s.Support.Params.LinkCount(n) }

// Sparse implements Sparse: as sparse as its support.
func (s *SparseStochastic) Sparse() bool {
	sp, ok := s.Support.Params.(Sparse)
	return ok && sp.Sparse()
}

// buildSparse is Build on a sparse support's adjacency lists. It draws
// δ̄ for the same links in the same order as the dense loop over all
// pairs (i ascending, then j ascending among i's neighbours in either
// direction), so both storages give the same network.
func (s *SparseStochastic) buildSparse(n int, support *Network, draw func() float64) *Network {
	support.sortLinks()
	in := make([][]int, n) // in[j]: the i ≠ j with a link i→j, ascending
	for i, row := range support.out {
		for _, j := range row {
			if j != i {
				in[j] = append(in[j], i)
			}
		}
	}
	nw := s.newSparse(n)
	nw.Symmetric = !s.Directed
	var nb []int
	for i := range n {
		nb = append(append(nb[:0], support.out[i]...), in[i]...)
		slices.Sort(nb)
		nb = slices.Compact(nb)
		for _, j := range nb {
			switch {
			case i == j:
			case nw.Symmetric && j > i:
				d := draw()
				nw.setLink(i, j, d)
				nw.setLink(j, i, d)
			case !nw.Symmetric:
				nw.setLink(i, j, draw())
			}
		}
	}
	return nw
}

// OneWay implements Topology.
func (s *SparseStochastic) OneWay() bool { return s.Directed }

// Build implements Topology: the support's links, each pair's δ̄ drawn in a
// fixed pair order from the PurposeTopology stream (after the support's
// own draws, which use another key).
func (s *SparseStochastic) Build(n int, seed uint64) (*Network, error) {
	support, err := s.Support.Params.Build(n, rng.Key(seed, 0x737570706f7274))
	if err != nil {
		return nil, fmt.Errorf("support (%s): %w", s.Support.Name, err)
	}
	r := rng.New(seed, rng.Global, rng.PurposeTopology)
	draw := func() float64 { return s.DeltaMin + (s.DeltaMax-s.DeltaMin)*r.Float64() }
	if support.Prob == nil {
		return s.buildSparse(n, support, draw), nil
	}
	nw := s.newNetwork(n)
	nw.Symmetric = !s.Directed
	for i := range n {
		for j := range n {
			linked := support.Prob[i][j] > 0 || support.Prob[j][i] > 0
			switch {
			case i == j || !linked:
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
