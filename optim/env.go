package optim

import (
	"math/rand/v2"

	"hgpsim/internal/rng"
)

// Env is what a plug-in (a fault, a behaviour) is built with instead of
// reaching into the core: the run's seed and node count, the node it acts
// for, the phase it runs in, and random streams named by purpose. A
// stream is derived from (Seed, Self, purpose) as internal/rng derives
// every stream of a run, so a new plug-in's draws never shift another's
// and never depend on scheduling.
type Env struct {
	Seed  uint64
	N     int        // nodes of the run (a server algorithm's node 0 included)
	Self  int        // the node
	Phase *PhaseSpec // the phase; nil outside one
}

// Stream returns the node's stream for purpose, whose position can be
// saved (rng.NewStream(Seed, Self, purpose)).
func (e Env) Stream(purpose rng.Purpose) *rng.Stream { return rng.NewStream(e.Seed, e.Self, purpose) }

// Rand returns the node's stream for purpose (rng.New(Seed, Self,
// purpose)), with the draws of Stream.
func (e Env) Rand(purpose rng.Purpose) *rand.Rand { return rng.New(e.Seed, e.Self, purpose) }
