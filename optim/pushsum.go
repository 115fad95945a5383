package optim

import (
	"fmt"
	"slices"

	"hgpsim/internal/vec"
)

// PushSumPair is the push-sum pair y = (z, ω) shared by averaging and SGP
// (optim/pdbo), with double-buffered payloads z (ω travels as the payload's
// mass; see the package doc). Its owner reads and steps Z, Omega and X
// between rounds; the buffers and Alg. 2's counts are the pair's own.
//
// z, x and the payloads are in F. ω, the p̄ / δ̄ counts and the link sums
// stay float64 in either precision: ω is a product of up to hundreds of
// push weights (one factor a round), whose rounding errors in float32
// would accumulate into a bias of x = z/ω, and the counts are frequencies
// summed over the whole run, which float32 would stop incrementing once
// they are large. In float32 the weights are rounded to F only where they
// multiply vectors (the mixing's Coef).
type PushSumPair[F vec.Float] struct {
	ID    int     // the client
	Z     []F     // z
	Omega float64 // ω
	out   [2][]F
	flip  int
	X     []F // z/ω, refreshed by Debias

	// Alg. 2 estimates, as running sums over the rounds seen, kept per
	// link for large n so that a client costs O(its links), not O(n).
	n      int
	pSum   linkSums // Σ_t p_ij(δ_i⁽ᵗ⁾)            (line 7, sender side)
	dCount linkSums // #{t : δ_{j→i}⁽ᵗ⁾ = 1}        (line 12, receiver side)
	rounds int

	terms []Term[F] // the premix buffer
	mixes [1]Mix[F]
}

// NewPushSumPair returns client id's pair among n clients, started at
// z = z0 (copied) with ω = 1.
func NewPushSumPair[F vec.Float](id, n int, z0 []F) PushSumPair[F] {
	d := len(z0)
	return PushSumPair[F]{
		ID:    id,
		Z:     append([]F(nil), z0...),
		Omega: 1,
		out:   [2][]F{make([]F, d), make([]F, d)},
		X:     append([]F(nil), z0...),
		n:     n,
	}
}

// NextPayload returns the buffer to fill for this round's message.
func (p *PushSumPair[F]) NextPayload() []F {
	p.flip ^= 1
	p.grow()
	return p.out[p.flip]
}

// grow makes the payload buffer of this round after Shed.
func (p *PushSumPair[F]) grow() {
	if p.out[p.flip] == nil {
		p.out[p.flip] = make([]F, len(p.X))
	}
}

// Vectors returns the vectors the pair holds: z, x and the payload
// buffers made so far (nil where none is), for memory accounting.
func (p *PushSumPair[F]) Vectors() [][]F { return [][]F{p.Z, p.X, p.out[0], p.out[1]} }

// Shed drops the payload buffers, which the next round makes again, and
// the premix's references to the last round's payloads: a pair that sends
// no more this phase keeps only z and x alive.
func (p *PushSumPair[F]) Shed() {
	p.out = [2][]F{}
	clear(p.terms[:cap(p.terms)])
	p.terms, p.mixes = p.terms[:0], [1]Mix[F]{}
}

// PayloadZ returns z as this round's payload without copying it: z and
// the buffer NextPayload would return swap places, so the payload is the
// buffer z was in and z moves to the payload buffer of two rounds ago,
// which nobody reads any more. z's contents are stale until the premix
// rewrites them, so nothing may read z between PayloadZ and Mixed.
func (p *PushSumPair[F]) PayloadZ() []F {
	p.flip ^= 1
	p.grow()
	p.Z, p.out[p.flip] = p.out[p.flip], p.Z
	return p.out[p.flip]
}

// Push sends z with its mass ω to every realized link (Eq. 2: φ of the
// message already in buf) and records line 7 of Alg. 2.
func (p *PushSumPair[F]) Push(r *Round, out Outbox, buf []F) {
	w := Push(out, r.Links, NewPayload(KindModel, buf, p.Omega))
	p.pSum.addAll(r.Links, w)
}

// Premix returns z ← Σ_j p_ji φ_j in sender order (Eq. 2 without ψ), for
// ApplyMixes or a driver's blocked mixing; Mixed does the rest.
func (p *PushSumPair[F]) Premix(in []Message) []Mix[F] {
	p.terms = TermsOf(p.terms, in, 0, len(p.Z), func(m *Message) (float64, bool) { return m.Weight, true })
	p.mixes[0] = Mix[F]{Dst: p.Z, Terms: p.terms}
	return p.mixes[:]
}

// Mixed sets ω ← Σ_j p_ji ω_j and records line 12 of Alg. 2, after z is
// mixed. ω is summed in float64 but with the weights z was mixed with,
// F(p_ji): in float32 the rounded weights of a sender no longer sum to 1,
// and mixing ω with the exact ones would let z's mass drift from ω's by
// that rounding every round (measured: x off the average by 0.25 ε a
// round, 9e-5 after 3,000 rounds), where with the same weights the drift
// cancels in x = z/ω. In float64 F(p_ji) = p_ji.
func (p *PushSumPair[F]) Mixed(in []Message) {
	p.Omega = 0
	for _, m := range in {
		p.Omega += float64(F(m.Weight)) * m.Mass
		p.dCount.add(m.From, 1)
	}
	p.rounds++
}

// Debias refreshes x = z/ω: x_i = F(inv·z_i) with inv = 1/ω and the
// product in float64 (in float64, floats.ScaleTo(x, 1/ω, z) bit for bit).
func (p *PushSumPair[F]) Debias() { vec.ScaleTo(p.X[:len(p.Z)], 1/p.Omega, p.Z) }

// N returns the number of clients.
func (p *PushSumPair[F]) N() int { return p.n }

// Estimates returns p̄_ij and δ̄_{j→i} for all j (Alg. 2 lines 14–15) as
// freshly allocated slices; zeros before the first round.
func (p *PushSumPair[F]) Estimates() (pBar, deltaBar []float64) {
	n := p.n
	pBar = make([]float64, n)
	deltaBar = make([]float64, n)
	if p.rounds == 0 {
		return pBar, deltaBar
	}
	t := float64(p.rounds)
	p.pSum.scatter(pBar, t)
	p.dCount.scatter(deltaBar, t)
	return pBar, deltaBar
}

// LinkEstimates is Estimates over the links a client has used: when it
// keeps its counts per link (above DenseCounts clients), links lists the
// j, ascending, of either count, and pBar and deltaBar hold their values
// there (0 for a j of one count only; every j not listed is 0); below,
// links is nil and the estimates are n-vectors, as Estimates returns
// them. Each value has the bits of the same entry of Estimates.
func (p *PushSumPair[F]) LinkEstimates() (links []int, pBar, deltaBar []float64) {
	if p.pSum.all != nil {
		pBar, deltaBar = p.Estimates()
		return nil, pBar, deltaBar
	}
	a, b := p.pSum.keys, p.dCount.keys
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0] < b[0]):
			links, a = append(links, int(a[0])), a[1:]
		case len(a) == 0 || b[0] < a[0]:
			links, b = append(links, int(b[0])), b[1:]
		default:
			links, a, b = append(links, int(a[0])), a[1:], b[1:]
		}
	}
	pBar, deltaBar = make([]float64, len(links)), make([]float64, len(links))
	if p.rounds == 0 {
		return links, pBar, deltaBar
	}
	t := float64(p.rounds)
	p.pSum.gather(pBar, links, t)
	p.dCount.gather(deltaBar, links, t)
	return links, pBar, deltaBar
}

// DenseCounts is the largest n for which a client keeps Alg. 2's counts
// as dense n-vectors: below it the vectors are small and a complete graph
// fills them anyway; above it a client keeps one key and one sum per link
// it has used.
const DenseCounts = 1024

// linkSums is a sum per neighbour j. Sparse, it holds the j seen so far
// with ascending keys; a sum starts at 0 when its key is inserted, so
// every sum is the same sequence of additions as in the dense vector.
type linkSums struct {
	all  []float64 // dense storage (n ≤ DenseCounts), else nil
	keys []int32
	sums []float64
}

func newLinkSums(n int) linkSums {
	if n <= DenseCounts {
		return linkSums{all: make([]float64, n)}
	}
	return linkSums{}
}

// add adds v to the sum of j.
func (s *linkSums) add(j int, v float64) {
	if s.all != nil {
		s.all[j] += v
		return
	}
	k, ok := slices.BinarySearch(s.keys, int32(j))
	if !ok {
		s.keys = slices.Insert(s.keys, k, int32(j))
		s.sums = slices.Insert(s.sums, k, 0)
	}
	s.sums[k] += v
}

// addAll adds v[k] to the sum of js[k], js ascending: a merge with the
// keys, which are almost always the same links round after round.
func (s *linkSums) addAll(js []int, v []float64) {
	if s.all != nil {
		for k, j := range js {
			s.all[j] += v[k]
		}
		return
	}
	k := 0
	for i, j := range js {
		for k < len(s.keys) && int(s.keys[k]) < j {
			k++
		}
		if k == len(s.keys) || int(s.keys[k]) != j {
			s.keys = slices.Insert(s.keys, k, int32(j))
			s.sums = slices.Insert(s.sums, k, 0)
		}
		s.sums[k] += v[i]
	}
}

// scatter writes sum/t into dst, an n-vector of zeros, for every j.
func (s *linkSums) scatter(dst []float64, t float64) {
	if s.all != nil {
		for j, x := range s.all {
			dst[j] = x / t
		}
		return
	}
	for k, j := range s.keys {
		dst[j] = s.sums[k] / t
	}
}

// gather writes sum/t of links[k] into dst[k], for links ascending and a
// superset of the keys of sparse sums; dst is zero elsewhere.
func (s *linkSums) gather(dst []float64, links []int, t float64) {
	k := 0
	for m, j := range s.keys {
		for links[k] != int(j) {
			k++
		}
		dst[k] = s.sums[m] / t
	}
}

// dense returns the sums as an n-vector.
func (s *linkSums) dense(n int) []float64 {
	if s.all != nil {
		return append([]float64(nil), s.all...)
	}
	v := make([]float64, n)
	for k, j := range s.keys {
		v[j] = s.sums[k]
	}
	return v
}

// load replaces the sums by v, an n-vector (sparse: its nonzero entries).
func (s *linkSums) load(v []float64) {
	if s.all != nil {
		copy(s.all, v)
		return
	}
	s.keys, s.sums = s.keys[:0], s.sums[:0]
	for j, x := range v {
		if x != 0 {
			s.keys, s.sums = append(s.keys, int32(j)), append(s.sums, x)
		}
	}
}

// PushSum is plain push-sum averaging in F: every client starts from its
// own vector and all of them converge to the average of the starting
// vectors.
type PushSum[F vec.Float] struct {
	ps PushSumPair[F]
}

// NewPushSum returns client id of n averaging the vector v0 (copied).
func NewPushSum[F vec.Float](id, n int, v0 []F) *PushSum[F] {
	return &PushSum[F]{ps: NewPushSumPair(id, n, v0)}
}

// Send implements Behaviour.
func (a *PushSum[F]) Send(r *Round, out Outbox) error {
	a.ps.Push(r, out, a.ps.PayloadZ())
	return nil
}

// Receive implements Behaviour.
func (a *PushSum[F]) Receive(r *Round, in []Message) error {
	ApplyMixes(a.Premix(r, in))
	return a.ReceiveMixed(r, in)
}

// Premix implements Premixer.
func (a *PushSum[F]) Premix(_ *Round, in []Message) []Mix[F] { return a.ps.Premix(in) }

// ReceiveMixed implements Premixer.
func (a *PushSum[F]) ReceiveMixed(_ *Round, in []Message) error {
	a.ps.Mixed(in)
	a.ps.Debias()
	if !AllFinite(a.ps.X) {
		return ErrNonFinite
	}
	return nil
}

// Value returns the client's current estimate z/ω (a read-only view).
func (a *PushSum[F]) Value() []F { return a.ps.X }

// Observe implements Observer: only X is meaningful for averaging. A
// float32 x goes out as Stats.X32, a view like X, which the consensus
// reads widened: a float64 copy would cost a parameter-sized buffer a
// client.
func (a *PushSum[F]) Observe() Stats {
	if vec.Is64[F]() {
		return Stats{X: vec.View[float64](a.ps.X), Weight: a.ps.Omega}
	}
	return Stats{X32: vec.View[float32](a.ps.X), Weight: a.ps.Omega}
}

// Estimates returns this client's p̄_ij and δ̄_{j→i} over the rounds so far.
func (a *PushSum[F]) Estimates() (pBar, deltaBar []float64) { return a.ps.Estimates() }

// StepDebias sets z += c·g and x = z·inv and reports whether every x is
// finite. In float64 it has the bits of floats.ScaleTo(psi, c, g),
// floats.Add(z, psi), floats.ScaleTo(x, inv, z) and AllFinite(x): each
// product rounded on its own (the conversions keep the compiler from
// fusing it into the sum). In float32 the step's product is F(c)·g in F
// and the debiasing's inv·z in float64, rounded to F, as Debias computes
// it. One pass instead of four matters because at n ≥ 100 the clients'
// vectors are out of cache.
func StepDebias[F vec.Float](z, x []F, c float64, g []F, inv float64) bool {
	if len(x) != len(z) || len(g) != len(z) {
		panic(fmt.Sprintf("optim: StepDebias of lengths %d, %d, %d", len(z), len(x), len(g)))
	}
	// The bad sums stay 0 while every x is finite: x − x is NaN for ±Inf
	// and NaN. Four of them, so that no chain of additions bounds the loop.
	var bad0, bad1, bad2, bad3 F
	cf := F(c)
	i := 0
	for ; i+4 <= len(z); i += 4 {
		z, x, g := z[i:i+4:i+4], x[i:i+4:i+4], g[i:i+4:i+4]
		z0 := z[0] + F(cf*g[0])
		z1 := z[1] + F(cf*g[1])
		z2 := z[2] + F(cf*g[2])
		z3 := z[3] + F(cf*g[3])
		z[0], z[1], z[2], z[3] = z0, z1, z2, z3
		x0, x1, x2, x3 := F(inv*float64(z0)), F(inv*float64(z1)), F(inv*float64(z2)), F(inv*float64(z3))
		x[0], x[1], x[2], x[3] = x0, x1, x2, x3
		bad0 += x0 - x0
		bad1 += x1 - x1
		bad2 += x2 - x2
		bad3 += x3 - x3
	}
	for ; i < len(z); i++ {
		zi := z[i] + F(cf*g[i])
		z[i] = zi
		xi := F(inv * float64(zi))
		x[i] = xi
		bad0 += xi - xi
	}
	return bad0+bad1+bad2+bad3 == 0
}
