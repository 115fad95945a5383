package optim

import (
	"fmt"
	"hgpsim/internal/vec"
	"math"
)

// Helpers of the server–client algorithms, which run every communication
// round as two runtime rounds: in the even one the server sends down to the
// clients it picked, in the odd one those clients upload. The runtime
// closes a round only when the supervisor says so, so the two halves are
// what lets an upload computed from the down message arrive in the same
// communication round.

// Down reports whether r is the down half of a communication round (server
// to clients).
func (r *Round) Down() bool { return r.Index%2 == 0 }

// Up reports whether r is the up half of a communication round (clients to
// server).
func (r *Round) Up() bool { return r.Index%2 == 1 }

// Exchange returns the communication round r is a half of, counted from 0
// in the phase.
func (r *Round) Exchange() int { return r.Index / 2 }

// SampleSize returns how many of m clients a server samples for the
// fraction participation ∈ (0, 1]: the nearest integer, at least one.
func SampleSize(participation float64, m int) int {
	return max(1, int(math.Round(participation*float64(m))))
}

// ValidateServer checks the parameters every server algorithm takes the
// same way: participation, the fraction of the m clients sampled, in
// (0, 1]; batch, the minibatch size, 0 (full batch) … 2²⁰; and n, the
// nodes, a server and at least one client.
func ValidateServer(participation float64, batch, n int) error {
	switch {
	case !(participation > 0 && participation <= 1):
		return fmt.Errorf("participation must be in (0, 1], got %v", participation)
	case batch < 0 || batch > 1<<20:
		return fmt.Errorf("batch must be in [0, 1048576], got %d", batch)
	case n < 2:
		return fmt.Errorf("needs a server and at least one client")
	}
	return nil
}

// SendBuffersOf holds what a behaviour sends once a round in two buffers
// used in turn. A sent vector must not change while its receivers read it,
// which they do until the round after; writing the buffer sent two rounds
// ago keeps that promise and allocates nothing in steady state. The zero
// value is ready to use.
type SendBuffersOf[F vec.Float] struct {
	bufs [2][]F
	cur  int
}

// SendBuffers are float64 send buffers.
type SendBuffers = SendBuffersOf[float64]

// Fill switches to the other buffer and returns it holding the
// concatenation of parts (nil parts add nothing). The result is valid
// until the second Fill after this one.
func (b *SendBuffersOf[F]) Fill(parts ...[]F) []F {
	b.cur ^= 1
	v := b.bufs[b.cur][:0]
	for _, p := range parts {
		v = append(v, p...)
	}
	b.bufs[b.cur] = v
	return v
}
