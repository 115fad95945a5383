package fed

import (
	"fmt"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/models"
	"hgpsim/optim"
)

// Averaging is the center of the weighted-nodes paper's baselines
// (FedAvg as Local-SVRG, Ditto, pFedMe): it sends the global model X to
// every node in each down round and sets it to the W-weighted average of
// the uploads in each up round. Personal, when set, is the model it
// evaluates instead, which the hooks update.
type Averaging struct {
	X, W []float64 // W by node − 1
	// Rounds is the number of rounds of a phase, for OnAverage's last.
	Rounds int
	Model  models.Bilevel[float64]
	Data   datasets.ClientData // the center's: D^valid and D^test
	// OnSend runs when the center sends X; OnAverage after it averaged
	// (last: in the phase's last round).
	OnSend    func() error
	OnAverage func(last bool) error
	Personal  []float64
	// The hooks' state across phases: the minibatches of the personal
	// steps (Ditto) and the global model before the round (pFedMe).
	Batch *optim.Batcher
	Prev  []float64
	syncs int
	all   []int
}

// Configure implements Strategy.
func (c *Averaging) Configure(*optim.Round) ([]int, []float64, error) {
	if c.all == nil {
		c.all = Everyone(len(c.W))
	}
	if c.OnSend != nil {
		if err := c.OnSend(); err != nil {
			return nil, nil, err
		}
	}
	return c.all, c.X, nil
}

// Aggregate implements Strategy.
func (c *Averaging) Aggregate(r *optim.Round, ups []optim.Message) error {
	c.syncs++
	if _, err := WeightedAverage(c.X, c.W, ups, optim.KindModel); err != nil {
		return err
	}
	if c.OnAverage != nil {
		return c.OnAverage(r.Index == c.Rounds-1)
	}
	return nil
}

// Observe implements optim.Observer: the global model, or the center's
// personal one.
func (c *Averaging) Observe() optim.Stats {
	if c.Personal != nil {
		return ServerStats(c.Model, c.Personal, c.Data)
	}
	return ServerStats(c.Model, c.X, c.Data)
}

// AveragingResult is what the center reports at the end of a phase.
// Field numbers are kept: nodeweights.CenterResult extends it, so that an
// experiment reads every center's result as one type.
type AveragingResult struct {
	Syncs int `wire:"1"` // the averagings so far
}

// Result implements optim.Resulter: the center's AveragingResult.
func (c *Averaging) Result() optim.Result {
	return optim.PutResult(AveragingResult{Syncs: c.syncs})
}

// averagingState is what the center carries across outer steps: the
// global model, the personal one and its hooks' state, and the averagings
// so far. Its weights and data never change.
type averagingState struct {
	Syncs             int
	X, Personal, Prev []float64
	Batch             *optim.BatcherState
}

// SaveState implements optim.Stateful.
func (c *Averaging) SaveState() ([]byte, error) {
	st := averagingState{Syncs: c.syncs, X: c.X, Personal: c.Personal, Prev: c.Prev}
	if c.Batch != nil {
		b, err := c.Batch.Save()
		if err != nil {
			return nil, err
		}
		st.Batch = &b
	}
	return optim.EncodeState(st)
}

// LoadState implements optim.Stateful.
func (c *Averaging) LoadState(b []byte) error {
	var st averagingState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	const who = "center"
	if st.Syncs < 0 {
		return fmt.Errorf("a saved center with %d averagings", st.Syncs)
	}
	if (st.Batch != nil) != (c.Batch != nil) {
		return fmt.Errorf("a saved center with minibatches %v for one with %v", st.Batch != nil, c.Batch != nil)
	}
	if err := optim.CheckLens(who, map[string][2]int{"global model": {len(st.X), len(c.X)},
		"personal model": {len(st.Personal), len(c.Personal)}, "previous global model": {len(st.Prev), len(c.Prev)}}, nil); err != nil {
		return err
	}
	if c.Batch != nil {
		if !optim.IsPerm(st.Batch.Perm) {
			return fmt.Errorf("%s: the saved minibatch order is not a permutation", who)
		}
		if err := c.Batch.Load(*st.Batch); err != nil {
			return err
		}
	}
	c.syncs = st.Syncs
	copy(c.X, st.X)
	copy(c.Personal, st.Personal)
	copy(c.Prev, st.Prev)
	return nil
}

// WeightedAverage writes Σ w_k x_k / Σ w_k over the uploads of the given
// kind from nodes k ≥ 1 that arrived (w indexed by node − 1) into dst and
// reports whether any did; a lost upload is left out and the others
// renormalized.
func WeightedAverage(dst []float64, w []float64, in []optim.Message, kind optim.Kind) (bool, error) {
	var total float64
	first := true
	for _, m := range in {
		if m.From == 0 || m.Kind != kind || m.From > len(w) {
			continue
		}
		wk := w[m.From-1]
		if first {
			clear(dst)
			first = false
		}
		floats.AddScaled(dst, wk, m.Vec)
		total += wk
	}
	if first {
		return false, nil
	}
	if total > 0 {
		floats.Scale(1/total, dst)
	}
	if !optim.AllFinite(dst) {
		return true, fmt.Errorf("%w: the averaged model", optim.ErrNonFinite)
	}
	return true, nil
}

// ServerStats evaluates x on the server's validation and test data.
func ServerStats(model models.Bilevel[float64], x []float64, d datasets.ClientData) optim.Stats {
	eval := func(d *datasets.Dataset) (float64, float64) {
		return model.InnerLoss(x, nil, d, nil), model.Accuracy(x, nil, d, nil)
	}
	st := optim.Stats{X: x}
	st.ValN, st.ValLoss, st.ValAcc = optim.Evaluate(d.Val, eval)
	st.TestN, st.TestLoss, st.TestAcc = optim.Evaluate(d.Test, eval)
	return st
}

// FromServer returns the payload of the given kind node 0 sent, the first
// that arrived, or nil.
func FromServer(in []optim.Message, kind optim.Kind) []float64 {
	for _, m := range in {
		if m.From == 0 && m.Kind == kind {
			return m.Vec
		}
	}
	return nil
}

// Uniform returns k weights 1/k.
func Uniform(k int) []float64 {
	w := make([]float64, k)
	for j := range w {
		w[j] = 1 / float64(k)
	}
	return w
}
