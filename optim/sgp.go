package optim

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/models"
)

// Variant selects where SGP takes its local gradient step.
type Variant int

const (
	// BeforeComm takes the step inside the message, φ = [z − α∇f, ω], ψ = 0:
	// Eq. (4a), Assran et al. (2019).
	BeforeComm Variant = iota + 1
	// AfterComm pushes φ = [z, ω] and adds ψ = [−α∇f, 0] locally:
	// Eq. (4b), Nedić & Olshevsky (2016).
	AfterComm
)

func (v Variant) String() string {
	switch v {
	case BeforeComm:
		return "before"
	case AfterComm:
		return "after"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// SGPConfig configures Stochastic Gradient Push.
type SGPConfig struct {
	Variant   Variant
	LR        Schedule
	BatchSize int // minibatch size |ζ|; 0 or ≥ the train size means full batch
}

// SGP is one client of Stochastic Gradient Push (Eq. 2 with Eq. 4a or 4b,
// Alg. 2), counting p̄_ij and δ̄_{j→i} as it goes.
type SGP struct {
	ps     pushSum
	cfg    SGPConfig
	model  models.Bilevel
	lambda []float64
	data   models.ClientData

	grad  []float64 // ∇f(x⁽ᵗ⁾) of this round, read again after mixing with Eq. (4b)
	alpha float64   // α_t of this round
	outer *models.Dataset
	gx    []float64 // scratch for ∂ₓF in Observe, which leaves grad alone
	gl    []float64 // scratch for ∂_λF in Observe
	batch *Batcher
}

// NewSGP returns client id of n training a plain model (no
// hyperparameters) from x0 (copied) with ω = 1. The model must be this
// client's own (see models.Model.Clone) and have exact second-order
// products.
func NewSGP(id, n int, model models.Model, data models.ClientData, x0 []float64, cfg SGPConfig, seed uint64) *SGP {
	so, ok := model.(models.SecondOrder)
	if !ok {
		panic(fmt.Sprintf("optim: model %T does not implement models.SecondOrder", model))
	}
	return NewSGPBilevel(id, n, models.Plain(so), nil, data, x0, cfg, seed)
}

// NewSGPBilevel returns client id of n minimizing its inner cost
// f_i(·, λ_i) for fixed hyperparameters lambda (copied).
func NewSGPBilevel(id, n int, model models.Bilevel, lambda []float64, data models.ClientData, x0 []float64, cfg SGPConfig, seed uint64) *SGP {
	d := model.DimX()
	if len(x0) != d || len(lambda) != model.DimLambda() {
		panic(fmt.Sprintf("optim: len(x0) = %d, len(λ) = %d for a model with d_x = %d, d_λ = %d", len(x0), len(lambda), d, model.DimLambda()))
	}
	return &SGP{
		ps:     newPushSum(id, n, x0),
		cfg:    cfg,
		model:  model,
		lambda: append([]float64(nil), lambda...),
		data:   data,
		grad:   make([]float64, d),
		batch:  NewBatcher(data.Train.N, cfg.BatchSize, rng.NewStream(seed, id, rng.PurposeBatch)),
	}
}

// Send implements Behaviour: Alg. 2 lines 4–7.
func (s *SGP) Send(r *Round, out Outbox) error {
	alpha := s.cfg.LR.At(r.Index)
	s.alpha = alpha
	if loss := s.model.InnerGrad(s.grad, s.ps.x, s.lambda, s.data.Train, s.batch.Next()); math.IsNaN(loss) || math.IsInf(loss, 0) {
		// The run has diverged: say so in this round rather than when the
		// state itself overflows, often hundreds of rounds later.
		return fmt.Errorf("%w: the minibatch training loss is %v (the iterates diverged; lower the step size)", ErrNonFinite, loss)
	}
	var buf []float64
	switch s.cfg.Variant {
	case BeforeComm: // Eq. (4a)
		buf = s.ps.nextPayload()
		floats.AddScaledTo(buf, s.ps.z, -alpha, s.grad)
	default: // Eq. (4b)
		buf = s.ps.payloadZ()
	}
	s.ps.push(r, out, buf)
	return nil
}

// Receive implements Behaviour: Alg. 2 lines 8–13.
func (s *SGP) Receive(r *Round, in []Message) error {
	ApplyMixes(s.Premix(r, in))
	return s.ReceiveMixed(r, in)
}

// Premix implements Premixer: z's share of line 8.
func (s *SGP) Premix(_ *Round, in []Message) []Mix { return s.ps.premix(in) }

// ReceiveMixed implements Premixer: Alg. 2 lines 8–13 after z is mixed.
func (s *SGP) ReceiveMixed(_ *Round, in []Message) error {
	s.ps.mixed(in)
	if !(s.ps.omega > 0) {
		if s.cfg.Variant == AfterComm {
			floats.AddScaled(s.ps.z, -s.alpha, s.grad)
		}
		return fmt.Errorf("push-sum weight ω = %v is not positive", s.ps.omega)
	}
	var finite bool
	if s.cfg.Variant == AfterComm {
		// ψ = −α_t ∇f added and x debiased in one pass over the vectors
		// (they are out of cache at n ≥ 100) rather than four.
		finite = stepDebias(s.ps.z, s.ps.x, -s.alpha, s.grad, 1/s.ps.omega)
	} else {
		s.ps.debias()
		finite = AllFinite(s.ps.x)
	}
	if !finite {
		return ErrNonFinite
	}
	return nil
}

// X returns the debiased parameters x = z/ω (read-only view).
func (s *SGP) X() []float64 { return s.ps.x }

// State returns copies of the push-sum pair (z, ω).
func (s *SGP) State() (z []float64, omega float64) {
	return append([]float64(nil), s.ps.z...), s.ps.omega
}

// Estimates returns p̄_ij and δ̄_{j→i} over the rounds so far (Alg. 2
// lines 14–15).
func (s *SGP) Estimates() (pBar, deltaBar []float64) { return s.ps.estimates() }

// Observe implements Observer with full-pass inner costs f_i(x_i, λ_i) and
// accuracies on each split.
func (s *SGP) Observe() Stats {
	st := Stats{X: s.ps.x, TrainN: s.data.Train.N, Weight: s.ps.omega}
	x, l := s.ps.x, s.lambda
	st.TrainLoss = s.model.InnerLoss(x, l, s.data.Train, nil)
	st.TrainAcc = s.model.Accuracy(x, l, s.data.Train, nil)
	if s.data.Val != nil && s.data.Val.N > 0 {
		st.ValN = s.data.Val.N
		st.ValLoss = s.model.InnerLoss(x, l, s.data.Val, nil)
		st.ValAcc = s.model.Accuracy(x, l, s.data.Val, nil)
	}
	if s.data.Test != nil && s.data.Test.N > 0 {
		st.TestN = s.data.Test.N
		st.TestLoss = s.model.InnerLoss(x, l, s.data.Test, nil)
		st.TestAcc = s.model.Accuracy(x, l, s.data.Test, nil)
	}
	if s.outer != nil {
		st.OuterLoss = s.model.OuterGrad(s.gx, s.gl, x, l, s.outer, nil)
	}
	return st
}

// SetOuterData makes Observe report the outer cost F_i on d.
func (s *SGP) SetOuterData(d *models.Dataset) {
	s.outer = d
	s.gx = make([]float64, len(s.grad))
	s.gl = make([]float64, len(s.lambda))
}

// Linearize returns the Linearization of this client's current state for
// hyper-gradient estimation: its (z, ω), λ, data and its Alg. 2 estimates.
// outer is the data of F_i; lr is the step size of the map being
// differentiated.
func (s *SGP) Linearize(outer *models.Dataset, lr float64, batch int, seed uint64) Linearization {
	z, omega := s.State()
	pBar, deltaBar := s.Estimates()
	return Linearization{ID: s.ps.id, N: len(s.ps.pSum), Model: s.model, Inner: s.data.Train, Outer: outer,
		Lambda: append([]float64(nil), s.lambda...), Z: z, Omega: omega, PBar: pBar, DeltaBar: deltaBar,
		Variant: s.cfg.Variant, LR: lr, Batch: batch, Seed: seed}
}

// Batcher draws minibatches without replacement, reshuffling each epoch,
// from the client's own stream.
type Batcher struct {
	perm []int
	pos  int
	size int
	r    *rng.Stream
}

// BatcherState is a batcher's position: its permutation, where it is in
// it, and its stream's position (a field of a Stateful client's state).
type BatcherState struct {
	Perm []int
	Pos  int
	RNG  []byte
}

// Save returns the batcher's position, for Load.
func (b *Batcher) Save() (BatcherState, error) {
	r, err := b.r.MarshalBinary()
	return BatcherState{Perm: b.perm, Pos: b.pos, RNG: r}, err
}

// Load restores a position Save returned, for a batcher built alike.
func (b *Batcher) Load(s BatcherState) error {
	if len(s.Perm) != len(b.perm) || s.Pos < 0 || s.Pos > len(s.Perm) {
		return fmt.Errorf("a saved minibatch position over %d examples (at %d) for a batcher over %d", len(s.Perm), s.Pos, len(b.perm))
	}
	if err := b.r.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("minibatch stream: %w", err)
	}
	copy(b.perm, s.Perm)
	b.pos = s.Pos
	return nil
}

// NewBatcher returns a batcher of minibatches of size rows out of n drawn
// from r (size <= 0 or >= n: the full batch, which Next returns as nil).
func NewBatcher(n, size int, r *rng.Stream) *Batcher {
	b := &Batcher{perm: make([]int, n), r: r, size: size}
	for i := range b.perm {
		b.perm[i] = i
	}
	if size <= 0 || size >= n {
		b.size = 0 // full batch: idx == nil
		return b
	}
	b.shuffle()
	return b
}

func (b *Batcher) shuffle() {
	b.r.Shuffle(len(b.perm), func(i, j int) { b.perm[i], b.perm[j] = b.perm[j], b.perm[i] })
	b.pos = 0
}

// Next returns the next minibatch's row indices (nil: the full batch),
// valid until the next call.
func (b *Batcher) Next() []int {
	if b.size == 0 {
		return nil
	}
	if b.pos+b.size > len(b.perm) {
		b.shuffle()
	}
	idx := b.perm[b.pos : b.pos+b.size]
	b.pos += b.size
	return idx
}
