package pdbo

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/internal/vec"
	"hgpsim/models"
	"hgpsim/optim"
)

// Sampling says how the rounds of a hyper-gradient estimator sample the
// Jacobians Â and B̂.
type Sampling int

const (
	// Alternate samples B̂ in even rounds and Â in odd rounds: the unbiased
	// estimator of Eq. (9); M iterations take 2M rounds.
	Alternate Sampling = iota + 1
	// Simultaneous samples both from the same round and minibatch (the
	// paper's "practical modification", App. D): M iterations take M rounds.
	// It is still unbiased, although the paper says otherwise: round m's B̂⁽ᵐ⁾
	// multiplies u⁽ᵐ⁾ = Â⁽ᵐ⁻¹⁾⋯Â⁽⁰⁾c^y, which depends only on earlier rounds,
	// so with rounds independent (Assumption 5) E[v⁽ᴹ⁾] = B̄Σ_{m<M}Āᵐc^y, the
	// truncated Neumann sum, exactly as with Alternate; B̂⁽ᵐ⁾ and Â⁽ᵐ⁾ are
	// correlated but never multiply each other. TestHGPUnbiasedOnStochasticDirected
	// checks both schedules.
	Simultaneous
)

func (s Sampling) String() string {
	switch s {
	case Alternate:
		return "alternate"
	case Simultaneous:
		return "simultaneous"
	}
	return fmt.Sprintf("Sampling(%d)", int(s))
}

// Rounds returns the communication rounds that M iterations take.
func (s Sampling) Rounds(m int) int {
	if s == Alternate {
		return 2 * m
	}
	return m
}

// Linearization is what client i knows when it estimates its hyper-gradient:
// its state y_i = (z_i, ω_i) after SGP, its hyperparameters, its data and the
// Alg. 2 estimates. The SGP map is linearized at y_i with step size LR.
//
// F is the precision of the SGP run (z, x and the model); the
// estimators' u and w are F too.
type Linearization[F vec.Float] struct {
	ID, N  int
	Model  models.Bilevel[F] // this client's own value
	Inner  *datasets.Dataset
	Outer  *datasets.Dataset // data of F_i
	Lambda []float64
	Z      []F
	Omega  float64
	// X, when not nil, is z/ω already computed (read-only, and not
	// changed while the estimator lives): the estimator shares it rather
	// than forming its own, where it has the bits z·(1/ω) has. Z may then
	// be nil.
	X        []F
	PBar     []float64 // p̄_ij for all j (sender side), or for the j of Links
	DeltaBar []float64 // δ̄_{j→i} for all j (receiver side), or for the j of Links
	// Links, when not nil, lists the j (ascending) that PBar and DeltaBar
	// hold, every other j being 0: a client of a large sparse network
	// keeps numbers per link it used, not n-vectors.
	Links   []int
	Variant Variant
	LR      float64 // α of the SGP map being differentiated
	// WeightFloor is the ε of the SGP run's small-weight guard (0: off):
	// the map differentiated takes the step Step() = LR·GuardScale(Omega, ε).
	WeightFloor float64
	Batch       int // minibatch of Â and B̂; 0 = full batch
	Seed        uint64
}

// Step is the local step of the SGP map being differentiated at this
// state: LR, scaled by the small-weight guard where ω_i < WeightFloor.
func (lin *Linearization[F]) Step() float64 { return lin.LR * GuardScale(lin.Omega, lin.WeightFloor) }

// local holds what every estimator computes from a Linearization.
type local[F vec.Float] struct {
	lin  Linearization[F]
	x    []F       // z/ω
	cy   []F       // z-part of ⟨c^y⟩_i = ∂_{z_i} F̄ = ∇ₓF_i / (n ω_i)
	clam []float64 // ⟨c^λ⟩_i = ∂_{λ_i} F̄ = ∂_λF_i / n
	// The receiver coefficients p̄_ij / δ̄_{j→i} of Eq. (12) that are not
	// 0: coef[k] for sender from[k], ascending.
	from  []int
	coef  []float64
	hv    []F       // scratch d_x of apply, made at its first use
	cross []float64 // scratch d_λ
	batch *optim.Batcher
	idx   []int                // this round's batch (nil: full), set by fix
	at    models.Linearized[F] // the products at (x_i, λ_i, idx), if the model has them
	full  models.Linearized[F] // the full-batch one, kept across rounds
	terms [2][]optim.Term[F]   // premix buffers (u and w)
	mixes [2]optim.Mix[F]
}

func newLocal[F vec.Float](lin Linearization[F]) local[F] {
	dx, dl := lin.Model.DimX(), lin.Model.DimLambda()
	links := lin.N
	if lin.Links != nil {
		links = len(lin.Links)
	}
	if (len(lin.Z) != dx && (lin.Z != nil || len(lin.X) != dx)) || len(lin.Lambda) != dl || len(lin.PBar) != links || len(lin.DeltaBar) != links {
		panic(fmt.Sprintf("optim: linearization of client %d has inconsistent dimensions", lin.ID))
	}
	l := local[F]{lin: lin, x: sharedX(lin), cy: make([]F, dx), clam: make([]float64, dl),
		cross: make([]float64, dl)}
	if l.x == nil {
		l.x = make([]F, dx)
		vec.ScaleTo(l.x, 1/lin.Omega, lin.Z)
	}
	l.lin.Z = nil // not read again: the estimator does not keep it alive
	lin.Model.OuterGrad(l.cy, l.clam, l.x, lin.Lambda, lin.Outer, nil)
	n := float64(lin.N)
	vec.ScaleTo(l.cy, 1/(n*lin.Omega), l.cy)
	floats.Scale(1/n, l.clam)
	for k := range links {
		j := k
		if lin.Links != nil {
			j = lin.Links[k]
		}
		// A link never seen during SGP has δ̂ = 0; its messages carry no
		// usable weight, so they are ignored rather than divided by zero.
		var c float64
		if j == lin.ID {
			c = lin.PBar[k]
		} else if lin.DeltaBar[k] > 0 {
			c = lin.PBar[k] / lin.DeltaBar[k]
		}
		if c != 0 {
			l.from, l.coef = append(l.from, j), append(l.coef, c)
		}
	}
	l.batch = optim.NewBatcher(lin.Inner.N, lin.Batch, rng.NewStream(lin.Seed, lin.ID, rng.PurposeHyper))
	return l
}

// fix sets the batch of this round's products. At full batch the point
// (x_i, λ_i, D_i) is the same in every round, so a model that can keep its
// forward pass (models.Linearizer) computes it once for the whole phase.
func (l *local[F]) fix(idx []int) {
	lz, ok := l.lin.Model.(models.Linearizer[F])
	switch {
	case !ok:
		l.at = nil
	case idx == nil && l.full != nil:
		l.at = l.full
	default:
		l.at = lz.Linearize(l.x, l.lin.Lambda, l.lin.Inner, idx)
		if idx == nil {
			l.full = l.at
		}
	}
	l.idx = idx
}

// apply writes ⟨Â u⟩_i (z-part) into dstA and ⟨B̂ u⟩_i into dstB (d_λ); a
// nil destination is skipped. Given the debiased mix
// mixed = Σ_j (δ_{j→i}/δ̄_{j→i}) p̄_ij u_j and the client's own u_i:
//
//	Eq. (4b): ⟨Ã⟩_ij = p̄_ij I + 1_ij ∂ψ_i  ⇒  dstA = mixed − (α/ω_i) H_i u_i
//	                                          dstB = −α (∂_λ∇ₓf_i)ᵀ u_i
//	Eq. (4a): ⟨Ã⟩_ij = p̄_ij ∂φ_i           ⇒  dstA = mixed − (α/ω_i) H_i mixed
//	                                          dstB = −α (∂_λ∇ₓf_i)ᵀ mixed
//
// with H_i = ∇²ₓf_i(x_i, λ_i; ζ) on the batch set by fix. Only ψ depends on
// λ, and with Eq. (4b) ψ stays home, hence u_i in B̂. The ω-part of u never
// reaches v and is not carried: Eq. (8) makes ∂ψ and ∂φ lower
// block-triangular in (z, ω). Both products of the same vector come from
// one pass of the model where it allows.
func (l *local[F]) apply(dstA []F, dstB []float64, mixed, self []F) {
	var hv []F
	if dstA != nil {
		if l.hv == nil {
			l.hv = make([]F, len(l.cy))
		}
		hv = l.hv
	}
	l.products(hv, dstB, mixed, self)
	if dstA != nil {
		addScaledTo(dstA, mixed, l.stepA(), hv)
	}
}

// stepA is the coefficient of H_i u in ⟨Â u⟩_i: dstA = mixed + stepA·hv.
func (l *local[F]) stepA() float64 { return -l.lin.Step() / l.lin.Omega }

// products is apply without its last step: it writes H_i·src into hv
// instead of dstA (a nil hv or dstB is skipped), so that a caller can fold
// dstA = mixed + stepA()·hv into its own pass over the vectors.
func (l *local[F]) products(hv []F, dstB []float64, mixed, self []F) {
	src := self
	if l.lin.Variant == BeforeComm {
		src = mixed
	}
	if l.at != nil {
		l.at.Products(hv, dstB, src)
	} else {
		if hv != nil {
			l.lin.Model.InnerHVP(hv, l.x, l.lin.Lambda, l.lin.Inner, l.idx, src)
		}
		if dstB != nil {
			l.lin.Model.InnerCross(dstB, l.x, l.lin.Lambda, l.lin.Inner, l.idx, src)
		}
	}
	if dstB != nil {
		floats.Scale(-l.lin.Step(), dstB)
	}
}

// bNeedsMessages reports whether B̂ reads other clients' vectors: only with
// Eq. (4a), where λ enters the pushed message.
func (l *local[F]) bNeedsMessages() bool { return l.lin.Variant == BeforeComm }

// mixOf returns dst = Σ_j coef_ij·part_j over the received messages, in
// sender order, with part the slice [off, off+d) of each payload; slot
// (0 or 1) names the term buffer, one per vector mixed in a round.
func (l *local[F]) mixOf(slot int, dst []F, in []optim.Message, off int) optim.Mix[F] {
	l.terms[slot] = optim.TermsOf(l.terms[slot], in, off, len(dst), func(m *optim.Message) (float64, bool) {
		return l.coefOf(m.From)
	})
	return optim.Mix[F]{Dst: dst, Terms: l.terms[slot]}
}

// coefOf returns the coefficient of sender j, and whether it is not 0.
func (l *local[F]) coefOf(j int) (float64, bool) {
	k, ok := slices.BinarySearch(l.from, j)
	if !ok {
		return 0, false
	}
	return l.coef[k], true
}

// densePBar returns p̄_ij for all j.
func (lin *Linearization[F]) densePBar() []float64 {
	if lin.Links == nil {
		return lin.PBar
	}
	p := make([]float64, lin.N)
	for k, j := range lin.Links {
		p[j] = lin.PBar[k]
	}
	return p
}

// estimate returns v + ⟨c^λ⟩_i as a fresh slice: every estimator keeps
// v⁽⁰⁾ = 0 and adds ⟨c^λ⟩_i at the end (App. B).
func (l *local[F]) estimate(v []float64) []float64 {
	return floats.AddTo(make([]float64, len(v)), v, l.clam)
}

// sharedX returns lin.X when the estimator may use it as its x: when it
// holds z·(1/ω) bit for bit (or z is not given). Otherwise nil.
func sharedX[F vec.Float](lin Linearization[F]) []F {
	if lin.X == nil || lin.Z == nil {
		return lin.X
	}
	if len(lin.X) != len(lin.Z) {
		return nil
	}
	inv := 1 / lin.Omega
	for k, z := range lin.Z {
		if math.Float64bits(float64(lin.X[k])) != math.Float64bits(float64(F(inv*float64(z)))) {
			return nil
		}
	}
	return lin.X
}

// scratch64 and scratch32 hold d_x-vectors that one call of an estimator
// needs and none keeps: a run holds as many as calls run at once, not one
// per client.
var scratch64, scratch32 sync.Pool

func scratchPool[F vec.Float]() *sync.Pool {
	if vec.Is64[F]() {
		return &scratch64
	}
	return &scratch32
}

// getScratch returns a vector of length d with arbitrary contents.
func getScratch[F vec.Float](d int) []F {
	if p, ok := scratchPool[F]().Get().(*[]F); ok && cap(*p) >= d {
		return (*p)[:d]
	}
	return make([]F, d)
}

func putScratch[F vec.Float](v []F) { scratchPool[F]().Put(&v) }

// release drops the model's references to the linearization point, once
// the estimator is done.
func (l *local[F]) release() {
	for _, at := range []models.Linearized[F]{l.at, l.full} {
		if at != nil {
			at.Release()
		}
	}
	l.at, l.full = nil, nil
}
