// Package rng derives every random stream of a run from the scenario seed.
//
// A simulation is reproducible only if no random draw depends on goroutine
// scheduling. hgpsim therefore never shares a generator between clients or
// purposes: a stream is named by (seed, client, purpose) and owned by one
// caller. Where a draw must be recomputable by several parties (an edge that
// both its sender and the router look at), Uniform gives a counter-based
// value: a pure function of its keys, with no state at all.
//
// It imports the standard library only.
package rng
