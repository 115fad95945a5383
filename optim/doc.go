// Package optim holds the algorithms of hgpsim as plain, single-threaded Go.
//
// Every client behaviour is a state machine in the style of etcd raft's
// RawNode: it owns its state, has no goroutines, clocks, logging or global
// random state, and is stepped by a driver one communication round at a time.
// Two drivers exist: Sequential in this package (tests, and the compute-only
// yardstick of benchmarks) and the proto.actor runtime in package actors.
// Both must produce bit-identical results, which is the main test keeping the
// actor runtime honest.
//
// # The round protocol
//
// A round t of a phase has two halves. First every client is asked what it
// pushes: Send(t, recv, weights) gets the receivers j whose link i→j is up
// this round (ascending, always including i itself) and the push weights
// p_ij(δ_i⁽ᵗ⁾) of Eq. (3), and returns ONE vector that goes to all of them.
// Then every client is handed what reached it: Receive(t, in) with the
// messages ordered by sender, so floating-point sums never depend on arrival
// order. A client never learns what it "should" have received: a link that is
// down simply delivers nothing.
//
// A payload returned by Send is read-only from then on and stays valid until
// the sender's next-but-one Send, so behaviours double-buffer their payloads
// and no vector is copied per receiver.
//
// # Notation
//
// Names follow pdbo-hgp-stochastic-directed (the PDBO paper): z and omega are
// the push-sum pair y = (z, ω) with debiased parameters x = z/ω (Eq. 2), pBar
// and deltaBar are the estimates p̄_ij and δ̄_{j→i} of Alg. 2, and the two SGP
// variants are Eq. (4a) (local step before communication, Assran et al.) and
// Eq. (4b) (after communication, Nedić & Olshevsky).
package optim
