package pdbo

import (
	"fmt"
	"math"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/internal/vec"
	"hgpsim/models"
	"hgpsim/optim"
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
	LR        optim.Schedule
	BatchSize int // minibatch size |ζ|; 0 or ≥ the train size means full batch
	// WeightFloor is ε of the small-weight guard (0: off): the local step
	// is scaled by GuardScale(ω_i, ε); see GuardScale.
	WeightFloor float64
}

// GuardScale is the factor min(1, ω/ε) by which the small-weight guard
// scales a client's local step α∇f_i(z_i/ω_i), with ω its push-sum weight
// when the gradient is taken; ε = 0 turns the guard off (factor 1).
//
// SGP's step acts on z while the model is x = z/ω, so x moves by α/ω times
// the gradient: a client that pushes mass out while nothing comes in
// (bursty links) sees ω fall geometrically and its effective step explode,
// and HGP's linearized map carries the same −(α/ω_i)H_i. Scaled, the step on
// x is at most α/max(ω_i, ε)·(ω_i/ω_i⁺) ≤ (1 + out-degree)·α/ε in the round's
// post-mixing weight ω_i⁺, and the linearized step α/max(ω_i, ε).
// The guarded map is a function of y_i alone (ψ_i, or φ_i with Eq. 4a), so
// Eq. (8) and the estimators apply to it unchanged with the step α·min(1,
// ω_i/ε); where every ω_i ≥ ε it is the plain map, bit for bit.
func GuardScale(omega, floor float64) float64 {
	if floor > 0 && omega < floor {
		return omega / floor
	}
	return 1
}

// SGP is one client of Stochastic Gradient Push (Eq. 2 with Eq. 4a or 4b,
// Alg. 2), counting p̄_ij and δ̄_{j→i} as it goes.
//
// F is the precision of z, x, the gradient and the messages; ω, λ and the
// counts are float64 in either (see optim.PushSumPair).
type SGP[F vec.Float] struct {
	ps     optim.PushSumPair[F]
	cfg    SGPConfig
	model  models.Bilevel[F]
	lambda []float64
	data   datasets.ClientData

	grad  []F     // ∇f(x⁽ᵗ⁾) of this round, read again after mixing with Eq. (4b)
	alpha float64 // α_t of this round, times the guard's factor
	outer *datasets.Dataset
	gx    []F       // scratch for ∂ₓF in Observe, which leaves grad alone
	gl    []float64 // scratch for ∂_λF in Observe
	batch *optim.Batcher
	shedZ bool // z was dropped (shed): no more rounds
}

// NewSGP returns client id of n training a plain model (no
// hyperparameters) from x0 (copied) with ω = 1. The model must be this
// client's own (see models.Model.Clone) and have exact second-order
// products.
func NewSGP[F vec.Float](id, n int, model models.Model[F], data datasets.ClientData, x0 []F, cfg SGPConfig, seed uint64) *SGP[F] {
	so, ok := model.(models.SecondOrder[F])
	if !ok {
		panic(fmt.Sprintf("optim: model %T does not implement models.SecondOrder", model))
	}
	return NewSGPBilevel(id, n, models.Plain(so), nil, data, x0, cfg, seed)
}

// NewSGPBilevel returns client id of n minimizing its inner cost
// f_i(·, λ_i) for fixed hyperparameters lambda (copied).
func NewSGPBilevel[F vec.Float](id, n int, model models.Bilevel[F], lambda []float64, data datasets.ClientData, x0 []F, cfg SGPConfig, seed uint64) *SGP[F] {
	d := model.DimX()
	if len(x0) != d || len(lambda) != model.DimLambda() {
		panic(fmt.Sprintf("optim: len(x0) = %d, len(λ) = %d for a model with d_x = %d, d_λ = %d", len(x0), len(lambda), d, model.DimLambda()))
	}
	return &SGP[F]{
		ps:     optim.NewPushSumPair(id, n, x0),
		cfg:    cfg,
		model:  model,
		lambda: append([]float64(nil), lambda...),
		data:   data,
		grad:   make([]F, d),
		batch:  optim.NewBatcher(data.Train.N, cfg.BatchSize, rng.NewStream(seed, id, rng.PurposeBatch)),
	}
}

// Send implements optim.Behaviour: Alg. 2 lines 4–7.
func (s *SGP[F]) Send(r *optim.Round, out optim.Outbox) error {
	// The guard reads ω_i where the gradient is taken, before mixing, so that
	// the step is a function of the client's own state (see GuardScale).
	alpha := s.cfg.LR.At(r.Index) * GuardScale(s.ps.Omega, s.cfg.WeightFloor)
	s.alpha = alpha
	if loss := s.model.InnerGrad(s.grad, s.ps.X, s.lambda, s.data.Train, s.batch.Next()); math.IsNaN(loss) || math.IsInf(loss, 0) {
		// The run has diverged: say so in this round rather than when the
		// state itself overflows, often hundreds of rounds later.
		return fmt.Errorf("%w: the minibatch training loss is %v (the iterates diverged; lower the step size)", optim.ErrNonFinite, loss)
	}
	var buf []F
	switch s.cfg.Variant {
	case BeforeComm: // Eq. (4a)
		buf = s.ps.NextPayload()
		addScaledTo(buf, s.ps.Z, -alpha, s.grad)
	default: // Eq. (4b)
		buf = s.ps.PayloadZ()
	}
	s.ps.Push(r, out, buf)
	return nil
}

// Receive implements optim.Behaviour: Alg. 2 lines 8–13.
func (s *SGP[F]) Receive(r *optim.Round, in []optim.Message) error {
	optim.ApplyMixes(s.Premix(r, in))
	return s.ReceiveMixed(r, in)
}

// Premix implements optim.Premixer: z's share of line 8.
func (s *SGP[F]) Premix(_ *optim.Round, in []optim.Message) []optim.Mix[F] { return s.ps.Premix(in) }

// ReceiveMixed implements optim.Premixer: Alg. 2 lines 8–13 after z is mixed.
func (s *SGP[F]) ReceiveMixed(_ *optim.Round, in []optim.Message) error {
	s.ps.Mixed(in)
	if !(s.ps.Omega > 0) {
		if s.cfg.Variant == AfterComm {
			vec.AddScaled(s.ps.Z, F(-s.alpha), s.grad)
		}
		return fmt.Errorf("push-sum weight ω = %v is not positive", s.ps.Omega)
	}
	var finite bool
	if s.cfg.Variant == AfterComm {
		// ψ = −α_t ∇f added and x debiased in one pass over the vectors
		// (they are out of cache at n ≥ 100) rather than four.
		finite = optim.StepDebias(s.ps.Z, s.ps.X, -s.alpha, s.grad, 1/s.ps.Omega)
	} else {
		s.ps.Debias()
		finite = optim.AllFinite(s.ps.X)
	}
	if !finite {
		return optim.ErrNonFinite
	}
	return nil
}

// X returns the debiased parameters x = z/ω (read-only view).
func (s *SGP[F]) X() []F { return s.ps.X }

// State returns copies of the push-sum pair (z, ω).
func (s *SGP[F]) State() (z []F, omega float64) {
	return append([]F(nil), s.ps.Z...), s.ps.Omega
}

// Estimates returns p̄_ij and δ̄_{j→i} over the rounds so far (Alg. 2
// lines 14–15).
func (s *SGP[F]) Estimates() (pBar, deltaBar []float64) { return s.ps.Estimates() }

// Observe implements optim.Observer with full-pass inner costs f_i(x_i, λ_i) and
// accuracies on each split; x is a view (Stats.X, or Stats.X32 in float32).
func (s *SGP[F]) Observe() optim.Stats {
	st := optim.Stats{TrainN: s.data.Train.N, Weight: s.ps.Omega}
	if vec.Is64[F]() {
		st.X = vec.View[float64](s.ps.X)
	} else {
		st.X32 = vec.View[float32](s.ps.X)
	}
	x, l := s.ps.X, s.lambda
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
func (s *SGP[F]) SetOuterData(d *datasets.Dataset) {
	s.outer = d
	s.gx = make([]F, len(s.grad))
	s.gl = make([]float64, len(s.lambda))
}

// Linearize returns the Linearization of this client's current state for
// hyper-gradient estimation: its (z, ω), λ, data and its Alg. 2 estimates.
// outer is the data of F_i; lr is the step size of the map being
// differentiated.
func (s *SGP[F]) Linearize(outer *datasets.Dataset, lr float64, batch int, seed uint64) Linearization[F] {
	z, omega := s.State()
	lin := s.linearize(outer, lr, batch, seed)
	lin.Z, lin.Omega = z, omega
	return lin
}

func (s *SGP[F]) linearize(outer *datasets.Dataset, lr float64, batch int, seed uint64) Linearization[F] {
	links, pBar, deltaBar := s.ps.LinkEstimates()
	return Linearization[F]{ID: s.ps.ID, N: s.ps.N(), Model: s.model, Inner: s.data.Train, Outer: outer,
		Lambda: append([]float64(nil), s.lambda...), Omega: s.ps.Omega, Links: links, PBar: pBar, DeltaBar: deltaBar,
		Variant: s.cfg.Variant, LR: lr, WeightFloor: s.cfg.WeightFloor, Batch: batch, Seed: seed}
}

// linearizeShared is Linearize for an SGP that runs no more rounds: the
// linearization shares x (or z, where x does not have the bits z·(1/ω)
// has) instead of copying z, and the SGP drops what only its rounds need
// (the payload buffers, the gradient, Observe's scratch) and, with shed,
// z, which leaves x and ω, all a warm start and a later linearization
// read; the SGP can then not run rounds.
func (s *SGP[F]) linearizeShared(outer *datasets.Dataset, lr float64, batch int, seed uint64, shed bool) Linearization[F] {
	lin := s.linearize(outer, lr, batch, seed)
	lin.Z, lin.X = s.ps.Z, s.ps.X
	if s.ps.Z != nil && sharedX(lin) == nil {
		lin.X = nil
		shed = false
	}
	s.ps.Shed()
	s.grad, s.gx = nil, nil
	if shed {
		lin.Z = nil
		s.ps.Z, s.shedZ = nil, true
	}
	return lin
}
