package nodeweights

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// What the Local-SVRG methods share: the SVRG state of a node, the
// finite-sum problems it solves, and the checks of their saved state. The
// parameters and layout every weighted-nodes algorithm shares are
// fed.WeightedCommon's.

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

// stepped is a behaviour that learns the outer step of each phase.
type stepped interface {
	optim.Behaviour
	optim.Stateful
	enter(step int)
}

// stepClient runs the same behaviour in every phase and tells it the step.
type stepClient struct{ b stepped }

func (c *stepClient) Enter(p *optim.PhaseSpec) (optim.Behaviour, error) {
	c.b.enter(p.Step)
	return c.b, nil
}

// SaveState implements optim.Stateful: the behaviour's state.
func (c *stepClient) SaveState() ([]byte, error) { return c.b.SaveState() }

// LoadState implements optim.Stateful.
func (c *stepClient) LoadState(b []byte) error { return c.b.LoadState(b) }

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
	model models.Bilevel[float64]
	data  *datasets.Dataset
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
	model     models.Bilevel[float64]
	data      *datasets.Dataset
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
// node's own coin. With acc set it also sums the node's part of Alg. 1's
// output (line 15): Σ v_t x_k^(t) over the steps t of the call that end
// between two averagings (the averaged iterates are the center's part).
type svrg struct {
	f           finiteSum
	x, y, mu, g []float64
	lr, q       float64
	batch       *optim.Batcher
	coin        *rng.Stream
	acc         []float64
	t           int      // steps since reset
	weight      outputWt // of acc's terms
}

// outputWt is the weight v_t = (1 − ρ)^(T−t) of the iterate x^(t) in
// Alg. 1's output x̄^(T) = Σ_t u_t x^(t) / Σ_t u_t, where u_t = (1 −
// ρ)^−(t+1) and ρ = min{γμ, q/4}: the ratio u_t/u_T, which cannot
// overflow. ρ = 0 weighs every iterate alike.
type outputWt struct {
	rho float64
	T   int
}

func (w outputWt) at(t int) float64 {
	if w.rho == 0 {
		return 1
	}
	return math.Pow(1-w.rho, float64(w.T-t))
}

// sum is Σ_{t=0}^{T} v_t.
func (w outputWt) sum() float64 {
	if w.rho == 0 {
		return float64(w.T + 1)
	}
	return -math.Expm1(float64(w.T+1)*math.Log1p(-w.rho)) / w.rho
}

func newSVRG(dim int, lr, q float64, batch *optim.Batcher, coin *rng.Stream) *svrg {
	return &svrg{x: make([]float64, dim), y: make([]float64, dim), mu: make([]float64, dim),
		g: make([]float64, dim), lr: lr, q: q, batch: batch, coin: coin}
}

// reset starts problem f at x⁰ (Alg. 1, line 2).
func (s *svrg) reset(f finiteSum, x0 []float64) {
	s.f = f
	copy(s.x, x0)
	copy(s.y, x0)
	f.grad(s.mu, s.y, nil)
	s.t = 0
	clear(s.acc)
}

// steps takes n local steps, the n-th ending at an averaging; it fails on
// a non-finite iterate.
func (s *svrg) steps(n int) error {
	for i := range n {
		idx := s.batch.Next()
		s.f.diff(s.g, s.x, s.y, idx)
		floats.Add(s.g, s.mu)
		if s.coin.Float64() < s.q {
			copy(s.y, s.x)
			s.f.grad(s.mu, s.y, nil)
		}
		floats.AddScaled(s.x, -s.lr, s.g)
		s.t++
		if s.acc != nil && i < n-1 {
			floats.AddScaled(s.acc, s.weight.at(s.t), s.x)
		}
	}
	if !optim.AllFinite(s.x) {
		return fmt.Errorf("%w: the Local-SVRG iterate (lower lr)", optim.ErrNonFinite)
	}
	return nil
}

// nodeStreams returns node k's minibatch sampler over n rows and its coin.
func nodeStreams(seed uint64, k, n, batch int) (*optim.Batcher, *rng.Stream) {
	return optim.NewBatcher(n, batch, rng.NewStream(seed, k, rng.PurposeBatch)), rng.NewStream(seed, k, rng.PurposeCoin)
}

// idle is a node that takes no part (local training).
type idle struct{}

func (idle) Send(*optim.Round, optim.Outbox) error       { return nil }
func (idle) Receive(*optim.Round, []optim.Message) error { return nil }
func (idle) enter(int)                                   {}

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
	Batch    optim.BatcherState
	Coin     []byte
	// Acc and T are the output sum and the steps since reset; the
	// weights of acc's terms are set at every reset.
	Acc []float64
	T   int
}

// save returns s's state; problems are the finite sums s.f may be.
func (s *svrg) save(problems ...finiteSum) (svrgState, error) {
	st := svrgState{X: s.x, Y: s.y, Mu: s.mu, LR: math.Float64bits(s.lr), Acc: s.acc, T: s.t}
	if s.f != nil {
		st.F = slices.Index(problems, s.f) + 1
		if st.F == 0 {
			return st, fmt.Errorf("the Local-SVRG problem %T is none of the node's", s.f)
		}
	}
	var err error
	if st.Batch, err = s.batch.Save(); err != nil {
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
	if s.acc != nil {
		if err := sameLen("Local-SVRG output sum", st.Acc, s.acc); err != nil {
			return err
		}
	}
	if st.T < 0 {
		return fmt.Errorf("a saved Local-SVRG call at step %d", st.T)
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
	copy(s.acc, st.Acc)
	s.t = st.T
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
func loadBatcher(b *optim.Batcher, st optim.BatcherState) error {
	seen := make([]bool, len(st.Perm))
	for _, v := range st.Perm {
		if v < 0 || v >= len(seen) || seen[v] {
			return fmt.Errorf("a saved minibatch order that is not a permutation of %d examples", len(seen))
		}
		seen[v] = true
	}
	return b.Load(st)
}
