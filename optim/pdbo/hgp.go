package pdbo

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/vec"
	"hgpsim/optim"
)

// HyperEstimator is a behaviour that estimates d_{λ_i}F̄.
type HyperEstimator interface {
	optim.Behaviour
	// Estimate returns the current hyper-gradient estimate (a fresh slice).
	Estimate() []float64
}

// HGP is Hyper-Gradient Push, Eq. (12) and Alg. 4: u travels over the links
// that exist, and the receiver debiases it by p̄_ij/δ̄_{j→i}. It keeps
// v⁽⁰⁾ = 0 and adds ⟨c^λ⟩_i at the end (App. B's form; equal to Alg. 4's
// v⁽⁰⁾ = ⟨c^λ⟩_i in exact arithmetic) so that VRHGP with α = 1, β = 0
// reproduces it bit for bit.
//
// u is F, the precision of the SGP run; v, the d_λ-vector Σ_m B̂u, is
// float64 in either precision: it sums M products, each a sum over all d_x
// coordinates, and costs d_λ ≪ d_x numbers.
type HGP[F vec.Float] struct {
	l        local[F]
	sampling Sampling
	u        []F
	v        []float64
	out      optim.SendBuffersOf[F]
	mixed    []F
	uNew     []F
	b        []float64
}

// NewHGP returns client lin.ID's HGP estimator.
func NewHGP[F vec.Float](lin Linearization[F], sampling Sampling) *HGP[F] {
	l := newLocal(lin)
	dx, dl := len(l.cy), len(l.clam)
	h := &HGP[F]{l: l, sampling: sampling, u: append([]F(nil), l.cy...), v: make([]float64, dl),
		mixed: make([]F, dx),
		uNew:  make([]F, dx), b: make([]float64, dl)}
	return h
}

// when returns dst if do, else nil: the destinations of local.apply for
// the halves of Eq. (12) a round performs.
func when[T vec.Float](do bool, dst []T) []T {
	if do {
		return dst
	}
	return nil
}

// roles tells which halves of Eq. (12) round r performs.
func roles(s Sampling, r int) (doB, doA bool) {
	if s == Alternate {
		return r%2 == 0, r%2 == 1
	}
	return true, true
}

// Send implements optim.Behaviour: u_i⁽ᵐ⁾ to every realized receiver.
func (h *HGP[F]) Send(r *optim.Round, out optim.Outbox) error {
	doB, doA := roles(h.sampling, r.Index)
	if !doA && doB && !h.l.bNeedsMessages() {
		return nil // with Eq. (4b) a B̂ round needs only the client's own u
	}
	optim.Send(out, r.Links, optim.NewPayload(optim.KindDual, h.out.Fill(h.u), 0))
	return nil
}

// Receive implements optim.Behaviour: the v and/or u updates of Eq. (12).
func (h *HGP[F]) Receive(r *optim.Round, in []optim.Message) error {
	optim.ApplyMixes(h.Premix(r, in))
	return h.ReceiveMixed(r, in)
}

// Premix implements optim.Premixer: the debiased mix of the received u_j.
func (h *HGP[F]) Premix(_ *optim.Round, in []optim.Message) []optim.Mix[F] {
	h.l.mixes[0] = h.l.mixOf(0, h.mixed, in, 0)
	return h.l.mixes[:1]
}

// ReceiveMixed implements optim.Premixer: Eq. (12) once u_j are mixed.
func (h *HGP[F]) ReceiveMixed(r *optim.Round, in []optim.Message) error {
	doB, doA := roles(h.sampling, r.Index)
	h.l.fix(h.l.batch.Next())
	// v⁽ᵐ⁺¹⁾ = v⁽ᵐ⁾ + Σ_j ⟨B̃⟩_ij u_j and u⁽ᵐ⁺¹⁾ = Σ_j ⟨Ã⟩_ij u_j
	h.l.apply(when(doA, h.uNew), when(doB, h.b), h.mixed, h.u)
	if doB {
		floats.Add(h.v, h.b)
	}
	if doA {
		h.u, h.uNew = h.uNew, h.u
	}
	if !optim.AllFinite(h.u) || !optim.AllFinite(h.v) {
		return optim.ErrNonFinite
	}
	return nil
}

// Estimate implements HyperEstimator: v⁽ᴹ⁾ + ⟨c^λ⟩_i.
func (h *HGP[F]) Estimate() []float64 {
	return h.l.estimate(h.v)
}

// VRHGP is the variance-reduced HGP of Sec. 4.2 in App. B's general form
// (Alg. 5 with line 22 reading w_j, as App. B does; only then is α = 1,
// β = 0 exactly HGP). Clients push [u; w].
//
// It holds four d_x-vectors of its own under a lock-step driver (three
// more with the linearization's x and c^y): the [u; w] it sent, and the
// next [u; w], into which the round's mixes are written and then updated
// in place. Under a driver whose receivers may read a payload one round
// late it keeps a third [u; w], so that it only ever writes the one sent
// two updates ago. H·u and H·w take a scratch vector for the call only.
type VRHGP[F vec.Float] struct {
	l           local[F]
	sampling    Sampling
	alpha, beta float64
	// damped: v⁽⁰⁾ = ⟨c^λ⟩_i and the estimate is v⁽ᴹ⁾ (NewVRHGPDamped).
	damped bool
	v      []float64
	// [u; w] lives in ring[cur] and is sent as it is; the round's mixes go
	// into ring[next], where the next [u; w] is then computed.
	ring       [3][]F
	cur, next  int
	u, w       []F // the halves of ring[cur]
	mixU, mixW []F // the halves of ring[next]
	bu, bw     []float64
}

// NewVRHGP returns client lin.ID's VR-HGP estimator with weights α, β ∈ [0, 1].
func NewVRHGP[F vec.Float](lin Linearization[F], alpha, beta float64, sampling Sampling) *VRHGP[F] {
	if !(alpha >= 0 && alpha <= 1 && beta >= 0 && beta <= 1) {
		panic(fmt.Sprintf("optim: VR-HGP needs α, β in [0, 1], got %v, %v", alpha, beta))
	}
	l := newLocal(lin)
	dx, dl := len(l.cy), len(l.clam)
	mk := func(n int) []float64 { return make([]float64, n) }
	h := &VRHGP[F]{l: l, sampling: sampling, alpha: alpha, beta: beta, v: mk(dl),
		ring: [3][]F{make([]F, 2*dx), make([]F, 2*dx)}, bu: mk(dl), bw: mk(dl)}
	h.turn(0)
	copy(h.u, l.cy)
	copy(h.w, l.cy)
	return h
}

// NewVRHGPDamped is NewVRHGP with the direct term handled as the authors'
// released code does: v starts at ⟨c^λ⟩_i instead of 0 and the estimate
// is v⁽ᴹ⁾ without adding ⟨c^λ⟩_i. Since every v-update is
// v ← α(v + B̂u) + (1−α)B̂w, the direct term is multiplied by α once per
// update: the estimate is NewVRHGP's with ⟨c^λ⟩_i replaced by
// α^M·⟨c^λ⟩_i (M v-updates), the same for α = 1 (HGP) and a vanishing
// ∂_λF̄ for α < 1 and large M (0.9²⁰⁰ ≈ 7·10⁻¹⁰).
func NewVRHGPDamped[F vec.Float](lin Linearization[F], alpha, beta float64, sampling Sampling) *VRHGP[F] {
	h := NewVRHGP(lin, alpha, beta, sampling)
	h.damped = true
	copy(h.v, h.l.clam)
	return h
}

// turn makes ring[cur] the current [u; w].
func (h *VRHGP[F]) turn(cur int) {
	d := len(h.l.cy)
	h.cur = cur
	h.u, h.w = h.ring[cur][:d:d], h.ring[cur][d:]
}

// target picks the buffer the round's mixes and the next [u; w] go into:
// under a lock-step driver the one sent in the round before, otherwise
// the one sent two updates ago (a third buffer, made at the first such
// round).
func (h *VRHGP[F]) target(r *optim.Round) {
	d := len(h.l.cy)
	size := 3
	if r.Lockstep {
		size = 2
	}
	h.next = (h.cur + 1) % size
	if h.next == h.cur { // cur = 2 after rounds of another driver
		h.next = 0
	}
	if h.ring[h.next] == nil {
		h.ring[h.next] = make([]F, 2*d)
	}
	h.mixU, h.mixW = h.ring[h.next][:d:d], h.ring[h.next][d:]
}

// Send implements optim.Behaviour: [u_i⁽ᵐ⁾; w_i⁽ᵐ⁾].
func (h *VRHGP[F]) Send(r *optim.Round, out optim.Outbox) error {
	doB, doA := roles(h.sampling, r.Index)
	if !doA && doB && !h.l.bNeedsMessages() {
		return nil
	}
	optim.Send(out, r.Links, optim.NewPayload(optim.KindDual, h.ring[h.cur], 0))
	return nil
}

// Receive implements optim.Behaviour: App. B's updates of v, u and w.
func (h *VRHGP[F]) Receive(r *optim.Round, in []optim.Message) error {
	optim.ApplyMixes(h.Premix(r, in))
	return h.ReceiveMixed(r, in)
}

// Premix implements optim.Premixer: the debiased mixes of the received u_j and w_j.
func (h *VRHGP[F]) Premix(r *optim.Round, in []optim.Message) []optim.Mix[F] {
	h.target(r)
	d := len(h.u)
	h.l.mixes[0] = h.l.mixOf(0, h.mixU, in, 0)
	h.l.mixes[1] = h.l.mixOf(1, h.mixW, in, d)
	return h.l.mixes[:2]
}

// ReceiveMixed implements optim.Premixer: App. B's updates once u_j, w_j are mixed.
func (h *VRHGP[F]) ReceiveMixed(r *optim.Round, in []optim.Message) error {
	doB, doA := roles(h.sampling, r.Index)
	h.l.fix(h.l.batch.Next())
	if doA {
		return h.receiveA(doB)
	}
	h.l.apply(nil, when(doB, h.bu), h.mixU, h.u)
	h.l.apply(nil, when(doB, h.bw), h.mixW, h.w)
	if doB {
		// v ← α(v + B̂u) + (1−α) B̂w
		for k := range h.v {
			h.v[k] = h.alpha*(h.v[k]+h.bu[k]) + (1-h.alpha)*h.bw[k]
		}
	}
	if !optim.AllFinite(h.u) || !optim.AllFinite(h.w) || !optim.AllFinite(h.v) {
		return optim.ErrNonFinite
	}
	return nil
}

// receiveA is ReceiveMixed in a round that updates u and w: the same
// arithmetic, with the updates of u and w each done in one pass over the
// vectors (they are out of cache at n ≥ 100), in place of the mixes:
//
//	u ← Âu = mix(u) + c·H u;  w ← β(Âw + c^y) + (1−β)(w + u_new),
//
// each product rounded on its own as floats.AddScaledTo rounds it. H u and
// then H w go through one scratch vector.
func (h *VRHGP[F]) receiveA(doB bool) error {
	hv := getScratch[F](len(h.w))
	defer putScratch(hv)
	h.l.products(hv, when(doB, h.bu), h.mixU, h.u)
	c := F(h.l.stepA())
	w, cy := h.w, h.l.cy[:len(h.w)]
	hu, un := hv[:len(w)], h.mixU[:len(w)]
	// The bad sums stay 0 while every coordinate is finite (x − x is NaN
	// for ±Inf and NaN).
	var badU, badW F
	for k := range un {
		v := un[k] + F(c*hu[k])
		un[k] = v
		badU += v - v
	}
	h.l.products(hv, when(doB, h.bw), h.mixW, h.w)
	if doB {
		// v ← α(v + B̂u) + (1−α) B̂w
		for k := range h.v {
			h.v[k] = h.alpha*(h.v[k]+h.bu[k]) + (1-h.alpha)*h.bw[k]
		}
	}
	hw, wn := hv[:len(w)], h.mixW[:len(w)]
	beta, rest := F(h.beta), F(1-h.beta)
	for k := range wn {
		aw := wn[k] + F(c*hw[k])
		v := F(beta*(aw+cy[k])) + F(rest*(w[k]+un[k]))
		wn[k] = v
		badW += v - v
	}
	h.turn(h.next)
	if badU != 0 || badW != 0 || !optim.AllFinite(h.v) {
		return optim.ErrNonFinite
	}
	return nil
}

// Estimate implements HyperEstimator: v⁽ᴹ⁾ + ⟨c^λ⟩_i (damped: v⁽ᴹ⁾, which
// already holds α^M·⟨c^λ⟩_i).
func (h *VRHGP[F]) Estimate() []float64 {
	if h.damped {
		return append([]float64(nil), h.v...)
	}
	return h.l.estimate(h.v)
}

// ExactBackprop is the exact recurrent backpropagation of Eq. (11) and
// Alg. 3: client i combines u_j from exactly the clients it pushed to, with
// its realized weights p_ij(δ_i). That needs every link to be undirected;
// on a directed network a message from a client i did not push to is an
// error, never silently used.
type ExactBackprop[F vec.Float] struct {
	l        local[F]
	sampling Sampling
	u        []F
	v        []float64
	out      optim.SendBuffersOf[F]
	// sentTo lists the receivers of this round's push, ascending, and
	// sentW their weights p_ij(δ_i).
	sentTo []int
	sentW  []float64
	mixed  []F
	uNew   []F
	b      []float64
}

// NewExactBackprop returns client lin.ID's exact estimator (PBar and
// DeltaBar are not used).
func NewExactBackprop[F vec.Float](lin Linearization[F], sampling Sampling) *ExactBackprop[F] {
	l := newLocal(lin)
	dx, dl := len(l.cy), len(l.clam)
	return &ExactBackprop[F]{l: l, sampling: sampling, u: append([]F(nil), l.cy...), v: make([]float64, dl),
		mixed: make([]F, dx), uNew: make([]F, dx), b: make([]float64, dl)}
}

// sent returns the weight this round's push gave receiver j, and whether
// it pushed to j.
func (e *ExactBackprop[F]) sent(j int) (float64, bool) {
	k, ok := slices.BinarySearch(e.sentTo, j)
	if !ok {
		return 0, false
	}
	return e.sentW[k], true
}

// Send implements optim.Behaviour, remembering whom it pushed to and with what
// weight p_ij(δ_i) this round.
func (e *ExactBackprop[F]) Send(r *optim.Round, out optim.Outbox) error {
	e.sentTo, e.sentW = e.sentTo[:0], e.sentW[:0]
	for k, j := range r.Links {
		// A link listed twice keeps its last weight, as an n-vector
		// indexed by receiver would.
		at, ok := slices.BinarySearch(e.sentTo, j)
		if ok {
			e.sentW[at] = r.Weights[k]
			continue
		}
		e.sentTo = slices.Insert(e.sentTo, at, j)
		e.sentW = slices.Insert(e.sentW, at, r.Weights[k])
	}
	optim.Send(out, r.Links, optim.NewPayload(optim.KindDual, e.out.Fill(e.u), 0))
	return nil
}

// Receive implements optim.Behaviour: Eq. (11).
func (e *ExactBackprop[F]) Receive(r *optim.Round, in []optim.Message) error {
	doB, doA := roles(e.sampling, r.Index)
	for k := range e.mixed {
		e.mixed[k] = 0
	}
	for k := range in {
		m := &in[k]
		w, ok := e.sent(m.From)
		if !ok {
			return fmt.Errorf("exact backpropagation needs undirected links: received from client %d without a link %d→%d", m.From, e.l.lin.ID, m.From)
		}
		vec.AddScaled(e.mixed, F(w), optim.VecOf[F](&m.Payload))
	}
	for _, j := range e.sentTo {
		if !containsFrom(in, j) {
			return fmt.Errorf("exact backpropagation needs undirected links: pushed to client %d but received nothing back", j)
		}
	}
	e.l.fix(e.l.batch.Next())
	e.l.apply(when(doA, e.uNew), when(doB, e.b), e.mixed, e.u)
	if doB {
		floats.Add(e.v, e.b)
	}
	if doA {
		e.u, e.uNew = e.uNew, e.u
	}
	if !optim.AllFinite(e.u) || !optim.AllFinite(e.v) {
		return optim.ErrNonFinite
	}
	return nil
}

func containsFrom(in []optim.Message, j int) bool {
	for _, m := range in {
		if m.From == j {
			return true
		}
	}
	return false
}

// Estimate implements HyperEstimator.
func (e *ExactBackprop[F]) Estimate() []float64 {
	return e.l.estimate(e.v)
}

// LocalHypergradient is the "PDBO-MTL (local)" baseline of the cooperative
// paper: each client uses only ⟨c^λ⟩_i = ∂_{λ_i}F̄ and sends nothing.
type LocalHypergradient[F vec.Float] struct{ l local[F] }

// NewLocalHypergradient returns client lin.ID's local baseline.
func NewLocalHypergradient[F vec.Float](lin Linearization[F]) *LocalHypergradient[F] {
	return &LocalHypergradient[F]{l: newLocal(lin)}
}

// Send implements optim.Behaviour: nothing travels.
func (h *LocalHypergradient[F]) Send(*optim.Round, optim.Outbox) error { return nil }

// Receive implements optim.Behaviour.
func (h *LocalHypergradient[F]) Receive(*optim.Round, []optim.Message) error { return nil }

// Estimate implements HyperEstimator.
func (h *LocalHypergradient[F]) Estimate() []float64 { return append([]float64(nil), h.l.clam...) }

// Observe implements optim.Observer: the current estimate.
func (h *HGP[F]) Observe() optim.Stats { return optim.Stats{Hyper: h.Estimate()} }

// Observe implements optim.Observer: the current estimate.
func (h *VRHGP[F]) Observe() optim.Stats { return optim.Stats{Hyper: h.Estimate()} }

// Observe implements optim.Observer: the current estimate.
func (e *ExactBackprop[F]) Observe() optim.Stats { return optim.Stats{Hyper: e.Estimate()} }

// Observe implements optim.Observer: the current estimate.
func (h *LocalHypergradient[F]) Observe() optim.Stats { return optim.Stats{Hyper: h.Estimate()} }

func (h *HGP[F]) release()                { h.l.release() }
func (h *VRHGP[F]) release()              { h.l.release() }
func (e *ExactBackprop[F]) release()      { e.l.release() }
func (h *LocalHypergradient[F]) release() { h.l.release() }
