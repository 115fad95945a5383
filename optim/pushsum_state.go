package optim

import (
	"fmt"

	"hgpsim/internal/vec"
)

// PushSumState is a PushSumPair's state between two rounds: what a client
// cut in the middle of a phase saves (see SplitPhase).
type PushSumState[F vec.Float] struct {
	Z, X         []F
	Omega        float64
	PSum, DCount []float64
	Rounds       int
}

// Save returns the pair's state, sharing z and x (encode it before the
// next round). The counts are n-vectors, as in the checkpoint format.
func (p *PushSumPair[F]) Save() PushSumState[F] {
	return PushSumState[F]{Z: p.Z, X: p.X, Omega: p.Omega, PSum: p.pSum.dense(p.n), DCount: p.dCount.dense(p.n), Rounds: p.rounds}
}

// Load restores a state Save returned, for a pair built alike; it changes
// nothing when st does not fit.
func (p *PushSumPair[F]) Load(st PushSumState[F]) error {
	if len(st.Z) != len(p.Z) || len(st.X) != len(p.X) || len(st.PSum) != p.n || len(st.DCount) != p.n {
		return fmt.Errorf("a saved push-sum state with |z| = %d, n = %d for a pair with |z| = %d, n = %d",
			len(st.Z), len(st.PSum), len(p.Z), p.n)
	}
	copy(p.Z, st.Z)
	copy(p.X, st.X)
	// A zero sum and a missing one are the same: the next addition to
	// either starts from +0.
	p.pSum.load(st.PSum)
	p.dCount.load(st.DCount)
	p.Omega, p.rounds = st.Omega, st.Rounds
	return nil
}
