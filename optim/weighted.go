package optim

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/models"
)

// This file holds what the algorithms of the weighted-nodes paper (Federated
// learning on adaptively weighted nodes by bilevel optimization: Sec. 4–5,
// Alg. 1–3) share: node 0 is the center, the hub of a star, holding
// D^valid (its Val split) and D^test (its Test split); nodes 1 … K hold
// their training data. Every algorithm runs one phase per outer iteration
// (an evaluation point), evaluated at its last round by the center.

// WeightedCommon are the parameters every weighted-nodes algorithm shares.
type WeightedCommon struct {
	Outer  int     `yaml:"outer" doc:"outer iterations S (the evaluation points, one phase each), 1 … 100000"`
	Epochs float64 `yaml:"epochs" doc:"epochs per Local-SVRG call: T_s = ⌈epochs·n_train/batch⌉ local steps, rounded up to a multiple of tau (the paper: 5), finite, > 0"`
	Tau    int     `yaml:"tau" doc:"local steps τ between two averagings (the paper: 10 or 20), 1 … 100000"`
	LR     float64 `yaml:"lr" doc:"local step γ of the θ-problem (the paper: 0.05, 0.02 or 0.01), finite, > 0"`
	Batch  int     `yaml:"batch" doc:"minibatch size (the paper: 50), 1 … 1048576"`
}

// SVRGParam is the reference-refresh probability of the Local-SVRG methods.
type SVRGParam struct {
	Q float64 `yaml:"q" doc:"probability that a node refreshes its SVRG reference point at a step (the paper: 1/50), in [0, 1]"`
}

func (p SVRGParam) validate() error {
	if !(p.Q >= 0 && p.Q <= 1) {
		return fmt.Errorf("q must be in [0, 1], got %v", p.Q)
	}
	return nil
}

func defaultWeightedCommon() WeightedCommon {
	return WeightedCommon{Outer: 20, Epochs: 5, Tau: 10, LR: 0.05, Batch: 50}
}

func positiveFinite(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s must be a finite number > 0, got %v", name, v)
	}
	return nil
}

func (c *WeightedCommon) validate(n int) error {
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
	if err := positiveFinite("epochs", c.Epochs); err != nil {
		return err
	}
	return positiveFinite("lr", c.LR)
}

// syncs returns the averagings of one Local-SVRG call on data of n rows:
// ⌈⌈epochs·n/batch⌉/τ⌉ (a batch of n or more is the full batch), at most
// 10⁶.
func (c *WeightedCommon) syncs(n int) int {
	t := math.Ceil(c.Epochs * float64(n) / float64(min(c.Batch, n)))
	return int(min(1e6, max(1, math.Ceil(t/float64(c.Tau)))))
}

// baselineSyncs is the averagings per outer iteration of a baseline: syncs,
// or when 0 those of one outer iteration of the bilevel method with the
// same parameters (two Local-SVRG calls and the hyper-gradient upload), so
// that all methods are compared at equal communication.
func (c *WeightedCommon) baselineSyncs(syncs, n int) int {
	if syncs > 0 {
		return syncs
	}
	return 2*c.syncs(n) + 1
}

// minTrain is the smallest training set of nodes 1 … K; an empty one is an
// error (a weight on a node without data means nothing).
func minTrain(s *Setup) (int, error) {
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

// phasesOf returns outer phases of rounds rounds each.
func phasesOf(name string, outer, rounds int) *Phases {
	ps := make(Phases, outer)
	for s := range ps {
		ps[s] = PhaseSpec{Name: name, Rounds: rounds, Step: s, Tick: Continue}
	}
	return &ps
}

// stepped is a behaviour that learns the outer step of each phase.
type stepped interface {
	Behaviour
	enter(step int)
}

// stepClient runs the same behaviour in every phase and tells it the step.
type stepClient struct{ b stepped }

func (c *stepClient) Enter(p *PhaseSpec) (Behaviour, error) {
	c.b.enter(p.Step)
	return c.b, nil
}

func (c *stepClient) held() Behaviour { return c.b }

// finiteSum is one node's f_k = (1/n_k) Σ_i f_{k,i} of the distributed
// finite-sum problem (16).
type finiteSum interface {
	// grad writes ∇f_idx(x) (idx nil: every row).
	grad(dst, x []float64, idx []int)
	// diff writes ∇f_idx(x) − ∇f_idx(y).
	diff(dst, x, y []float64, idx []int)
	rows() int
}

// lossSum is the θ-problem (1): f_{k,i}(θ) = l(θ; z_k^(i)), regularizer
// included.
type lossSum struct {
	model models.Bilevel
	data  *models.Dataset
	tmp   []float64
}

func (p *lossSum) rows() int { return p.data.N }

func (p *lossSum) grad(dst, x []float64, idx []int) {
	p.model.InnerGrad(dst, x, nil, p.data, idx)
}

func (p *lossSum) diff(dst, x, y []float64, idx []int) {
	p.model.InnerGrad(dst, x, nil, p.data, idx)
	p.model.InnerGrad(p.tmp, y, nil, p.data, idx)
	floats.Sub(dst, p.tmp)
}

// hvpSum is the h-problem (15): f_{k,i}(h) = ½ hᵀ∇²l(θ; z_k^(i))h − hᵀg₀
// with g₀ = ∇L̂₀(θ); its gradient is an HVP minus g₀, and the SVRG
// difference one HVP of x − y.
type hvpSum struct {
	model     models.Bilevel
	data      *models.Dataset
	theta, g0 []float64
	tmp       []float64
}

func (p *hvpSum) rows() int { return p.data.N }

func (p *hvpSum) grad(dst, x []float64, idx []int) {
	p.model.InnerHVP(dst, p.theta, nil, p.data, idx, x)
	floats.Sub(dst, p.g0)
}

func (p *hvpSum) diff(dst, x, y []float64, idx []int) {
	floats.SubTo(p.tmp, x, y)
	p.model.InnerHVP(dst, p.theta, nil, p.data, idx, p.tmp)
}

// svrg is one node's loopless SVRG state (Alg. 1, lines 5–7 and 11): the
// iterate x, the reference y and the full gradient μ = ∇f_k(y). The
// reference is refreshed (y ← x before the step) with probability q by the
// node's own coin.
type svrg struct {
	f           finiteSum
	x, y, mu, g []float64
	lr, q       float64
	batch       *Batcher
	coin        *rng.Stream
}

func newSVRG(dim int, lr, q float64, batch *Batcher, coin *rng.Stream) *svrg {
	return &svrg{x: make([]float64, dim), y: make([]float64, dim), mu: make([]float64, dim),
		g: make([]float64, dim), lr: lr, q: q, batch: batch, coin: coin}
}

// reset starts problem f at x⁰ (Alg. 1, line 2).
func (s *svrg) reset(f finiteSum, x0 []float64) {
	s.f = f
	copy(s.x, x0)
	copy(s.y, x0)
	f.grad(s.mu, s.y, nil)
}

// steps takes n local steps; it fails on a non-finite iterate.
func (s *svrg) steps(n int) error {
	for range n {
		idx := s.batch.Next()
		s.f.diff(s.g, s.x, s.y, idx)
		floats.Add(s.g, s.mu)
		if s.coin.Float64() < s.q {
			copy(s.y, s.x)
			s.f.grad(s.mu, s.y, nil)
		}
		floats.AddScaled(s.x, -s.lr, s.g)
	}
	if !AllFinite(s.x) {
		return fmt.Errorf("%w: the Local-SVRG iterate (lower lr)", ErrNonFinite)
	}
	return nil
}

// nodeStreams returns node k's minibatch sampler over n rows and its coin.
func nodeStreams(seed uint64, k, n, batch int) (*Batcher, *rng.Stream) {
	return NewBatcher(n, batch, rng.NewStream(seed, k, rng.PurposeBatch)), rng.NewStream(seed, k, rng.PurposeCoin)
}

// nodeList is 1 … K.
func nodeList(k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// weightedAverage writes Σ w_k x_k / Σ w_k over the KindModel uploads that
// arrived (w indexed by node − 1) into dst and reports whether any did; a
// lost upload is left out and the others renormalized.
func weightedAverage(dst []float64, w []float64, in []Message, kind Kind) (bool, error) {
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
	if !AllFinite(dst) {
		return true, fmt.Errorf("%w: the averaged model", ErrNonFinite)
	}
	return true, nil
}

// centerStats evaluates x on the center's validation and test data.
func centerStats(model models.Bilevel, x []float64, d models.ClientData) Stats {
	st := Stats{X: x}
	if d.Val != nil && d.Val.N > 0 {
		st.ValN = d.Val.N
		st.ValLoss = model.InnerLoss(x, nil, d.Val, nil)
		st.ValAcc = model.Accuracy(x, nil, d.Val, nil)
	}
	if d.Test != nil && d.Test.N > 0 {
		st.TestN = d.Test.N
		st.TestLoss = model.InnerLoss(x, nil, d.Test, nil)
		st.TestAcc = model.Accuracy(x, nil, d.Test, nil)
	}
	return st
}

// fromCenter returns the payload of the given kind the center sent, or nil.
func fromCenter(in []Message, kind Kind) []float64 {
	for _, m := range in {
		if m.From == 0 && m.Kind == kind {
			return m.Vec
		}
	}
	return nil
}

// sendCopy sends a fresh copy of v (payloads stay valid for as long as the
// receivers need them without double buffering).
func sendCopy(out Outbox, to []int, kind Kind, v []float64) {
	Send(out, to, Payload{Kind: kind, Vec: slices.Clone(v)})
}

// idle is a node that takes no part (local training).
type idle struct{}

func (idle) Send(*Round, Outbox) error       { return nil }
func (idle) Receive(*Round, []Message) error { return nil }
func (idle) enter(int)                       {}

// SaveState implements Stateful: an idle node has no state.
func (idle) SaveState() ([]byte, error) { return nil, nil }

// LoadState implements Stateful: only the empty state fits.
func (idle) LoadState(b []byte) error {
	if len(b) != 0 {
		return fmt.Errorf("a saved state of %d bytes for an idle node, which has none", len(b))
	}
	return nil
}

// svrgState is what an svrg carries across phases: the iterate, the
// reference and its full gradient, the step (bits, so that every float is
// kept exactly), the problem it works on (0: none yet, j: the j-th of
// those save is given), and the positions of its minibatch stream and
// coin. The gradient scratch g is refilled before every use.
type svrgState struct {
	X, Y, Mu []float64
	LR       uint64
	F        int
	Batch    BatcherState
	Coin     []byte
}

// save returns s's state; problems are the finite sums s.f may be.
func (s *svrg) save(problems ...finiteSum) (svrgState, error) {
	st := svrgState{X: s.x, Y: s.y, Mu: s.mu, LR: math.Float64bits(s.lr)}
	if s.f != nil {
		st.F = slices.Index(problems, s.f) + 1
		if st.F == 0 {
			return st, fmt.Errorf("the Local-SVRG problem %T is none of the node's", s.f)
		}
	}
	var err error
	if st.Batch, err = s.batch.save(); err != nil {
		return st, err
	}
	if st.Coin, err = s.coin.MarshalBinary(); err != nil {
		return st, fmt.Errorf("coin stream: %w", err)
	}
	return st, nil
}

// load restores what save returned, for an svrg built alike.
func (s *svrg) load(st svrgState, problems ...finiteSum) error {
	if err := sameLen("the Local-SVRG iterate", st.X, s.x); err != nil {
		return err
	}
	if err := sameLen("the Local-SVRG reference", st.Y, s.y); err != nil {
		return err
	}
	if err := sameLen("the Local-SVRG full gradient", st.Mu, s.mu); err != nil {
		return err
	}
	if st.F < 0 || st.F > len(problems) {
		return fmt.Errorf("a saved Local-SVRG problem %d of a node with %d", st.F, len(problems))
	}
	if err := loadBatcher(s.batch, st.Batch); err != nil {
		return err
	}
	if err := s.coin.UnmarshalBinary(st.Coin); err != nil {
		return fmt.Errorf("coin stream: %w", err)
	}
	copy(s.x, st.X)
	copy(s.y, st.Y)
	copy(s.mu, st.Mu)
	s.lr = math.Float64frombits(st.LR)
	s.f = nil
	if st.F > 0 {
		s.f = problems[st.F-1]
	}
	return nil
}

// sameLen reports a saved vector whose length is not its destination's.
func sameLen(what string, saved, dst []float64) error {
	if len(saved) != len(dst) {
		return fmt.Errorf("a saved %s of length %d for one of length %d", what, len(saved), len(dst))
	}
	return nil
}

// vecSlot is a saved vector and the one it is loaded into.
type vecSlot struct {
	name       string
	saved, dst []float64
}

// loadVecs copies each saved vector into its destination after checking
// that all their lengths fit; it changes nothing when one does not.
func loadVecs(slots ...vecSlot) error {
	for _, v := range slots {
		if err := sameLen(v.name, v.saved, v.dst); err != nil {
			return err
		}
	}
	for _, v := range slots {
		copy(v.dst, v.saved)
	}
	return nil
}

// loadBatcher is b.load after checking that the saved permutation is one
// of b's examples (a state that does not fit fails here, not at a later
// minibatch).
func loadBatcher(b *Batcher, st BatcherState) error {
	seen := make([]bool, len(st.Perm))
	for _, v := range st.Perm {
		if v < 0 || v >= len(seen) || seen[v] {
			return fmt.Errorf("a saved minibatch order that is not a permutation of %d examples", len(seen))
		}
		seen[v] = true
	}
	return b.load(st)
}
