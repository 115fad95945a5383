package graph

import "fmt"

func init() {
	Failures.Register("partition",
		"A scheduled partition: from round `from` to round `to` (exclusive) every link between different groups is cut, both directions; nodes listed in no group form one more group. The expected graph is not strongly connected meanwhile (allowed, and said by validate); push-sum keeps each group's mass and the network heals at `to`.",
		func() Failure { return &Partition{} })
}

// Partition cuts the links between groups of nodes for an interval.
type Partition struct {
	NoFailure
	Groups [][]int `yaml:"groups" doc:"groups of nodes; nodes in no group form one more group"`
	From   uint64  `yaml:"from" doc:"first round of the partition"`
	To     uint64  `yaml:"to" doc:"round at which the network heals (> from)"`
	group  []int   // node → group, built by Validate
}

// Example implements registry.Exampler: a partition needs its groups.
func (*Partition) Example() string {
	return `clients: 6
network:
  failures: [{kind: partition, groups: [[0, 1, 2]], from: 10, to: 25}]
sgp: {rounds: 40, eval_every: 10}
`
}

// Validate implements Failure.
func (p *Partition) Validate(n int) error {
	if len(p.Groups) == 0 {
		return fmt.Errorf("groups: list at least one group")
	}
	if p.To <= p.From {
		return fmt.Errorf("to (%d) must come after from (%d)", p.To, p.From)
	}
	p.group = make([]int, n)
	for i := range p.group {
		p.group[i] = len(p.Groups) // the rest
	}
	seen := map[int]bool{}
	for g, nodes := range p.Groups {
		if err := checkNodes(fmt.Sprintf("groups[%d]", g), nodes, n); err != nil {
			return err
		}
		for _, v := range nodes {
			if seen[v] {
				return fmt.Errorf("groups: node %d is in two groups", v)
			}
			seen[v] = true
			p.group[v] = g
		}
	}
	return nil
}

// Cut implements Failure.
func (p *Partition) Cut(_ uint64, a, b int, tick uint64) bool {
	return tick >= p.From && tick < p.To && p.group[a] != p.group[b]
}

// Breaks implements Failure.
func (p *Partition) Breaks() bool { return true }
