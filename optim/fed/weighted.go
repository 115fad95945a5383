package fed

import (
	"fmt"
	"math"

	"hgpsim/optim"
)

// What the algorithms of the weighted-nodes paper (Federated learning on
// adaptively weighted nodes by bilevel optimization: Sec. 4–5, Alg. 1–3)
// share, its baselines here and its bilevel method in optim/nodeweights:
// node 0 is the center, the hub of a star, holding D^valid (its Val split)
// and D^test (its Test split); nodes 1 … K hold their training data. Every
// algorithm runs one phase per outer iteration (an evaluation point),
// evaluated at its last round by the center.

// WeightedCommon are the parameters every weighted-nodes algorithm shares.
type WeightedCommon struct {
	Outer  int     `yaml:"outer" doc:"outer iterations S (the evaluation points, one phase each), 1 … 100000"`
	Epochs float64 `yaml:"epochs" doc:"epochs per Local-SVRG call: T_s = ⌈epochs·n_train/batch⌉ local steps, rounded up to a multiple of tau (the paper: 5), finite, > 0"`
	Tau    int     `yaml:"tau" doc:"local steps τ between two averagings (the paper: 10 or 20), 1 … 100000"`
	LR     float64 `yaml:"lr" doc:"local step γ of the θ-problem (the paper: 0.05, 0.02 or 0.01), finite, > 0"`
	Batch  int     `yaml:"batch" doc:"minibatch size (the paper: 50), 1 … 1048576"`
}

// Server reports that node 0, the center, is the server of every
// weighted-nodes algorithm (the promoted method implements
// optim.Algorithm's).
func (*WeightedCommon) Server() bool { return true }

// DefaultWeightedCommon returns the paper's parameters.
func DefaultWeightedCommon() WeightedCommon {
	return WeightedCommon{Outer: 20, Epochs: 5, Tau: 10, LR: 0.05, Batch: 50}
}

// PositiveFinite returns an error unless v, the parameter name, is a
// finite number > 0.
func PositiveFinite(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s must be a finite number > 0, got %v", name, v)
	}
	return nil
}

// Check validates the parameters for a network of n nodes.
func (c *WeightedCommon) Check(n int) error {
	switch {
	case c.Outer < 1 || c.Outer > 100_000:
		return fmt.Errorf("outer must be in [1, 100000], got %d", c.Outer)
	case c.Tau < 1 || c.Tau > 100_000:
		return fmt.Errorf("tau must be in [1, 100000], got %d", c.Tau)
	case c.Batch < 1 || c.Batch > 1<<20:
		return fmt.Errorf("batch must be in [1, 1048576], got %d", c.Batch)
	case n < 3:
		return fmt.Errorf("the weighted-nodes algorithms need a center and at least two nodes, got %d nodes", n)
	}
	if err := PositiveFinite("epochs", c.Epochs); err != nil {
		return err
	}
	return PositiveFinite("lr", c.LR)
}

// Averagings returns the averagings of one Local-SVRG call on data of n rows:
// ⌈⌈epochs·n/batch⌉/τ⌉ (a batch of n or more is the full batch), at most
// 10⁶.
func (c *WeightedCommon) Averagings(n int) int {
	t := math.Ceil(c.Epochs * float64(n) / float64(min(c.Batch, n)))
	return int(min(1e6, max(1, math.Ceil(t/float64(c.Tau)))))
}

// Baseline are the parameters of a baseline of the weighted-nodes paper:
// the shared ones and its communication budget.
type Baseline struct {
	WeightedCommon `yaml:",inline"`
	Syncs          int `yaml:"syncs" doc:"averagings per outer iteration, 0 … 10⁶; 0 means those of one outer iteration of weighted-nodes (2⌈T_s/τ⌉ + 1)"`
}

// Validate checks the parameters for a network of n nodes.
func (b *Baseline) Validate(n int) error {
	if err := b.Check(n); err != nil {
		return err
	}
	if b.Syncs < 0 || b.Syncs > 1_000_000 {
		return fmt.Errorf("syncs must be in [0, 10⁶], got %d", b.Syncs)
	}
	return nil
}

// PerOuter is the averagings per outer iteration on training sets of at
// least n rows: syncs, or when 0 those of one outer iteration of the
// bilevel method with the same parameters (two Local-SVRG calls and the
// hyper-gradient upload), so that all methods are compared at equal
// communication.
func (b *Baseline) PerOuter(n int) int {
	if b.Syncs > 0 {
		return b.Syncs
	}
	return 2*b.Averagings(n) + 1
}

// MinTrain is the smallest training set of nodes 1 … K; an empty one is an
// error (a weight on a node without data means nothing), and so is a
// center without validation data.
func MinTrain(s *optim.Setup) (int, error) {
	n := math.MaxInt
	for k := 1; k < len(s.Data); k++ {
		if s.Data[k].Train == nil || s.Data[k].Train.N == 0 {
			return 0, fmt.Errorf("node %d has no training data", k)
		}
		n = min(n, s.Data[k].Train.N)
	}
	if d := s.Data[0]; d.Val == nil || d.Val.N == 0 {
		return 0, fmt.Errorf("the center (node 0) has no validation data D^valid")
	}
	return n, nil
}

// OuterPhases returns outer phases named name of rounds rounds each.
func OuterPhases(name string, outer, rounds int) *optim.Phases {
	ps := make(optim.Phases, outer)
	for s := range ps {
		ps[s] = optim.PhaseSpec{Name: name, Rounds: rounds, Step: s, Tick: optim.Continue}
	}
	return &ps
}
