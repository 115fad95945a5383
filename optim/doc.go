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
// A round t of a phase has two halves. First every client sends: Send(r, out)
// gets the Round — its realized out-links r.Links (ascending, itself
// included) and their push weights r.Weights of Eq. (3) — and addresses
// messages through an Outbox (Push for push-sum to any subset of the links,
// Send for plain messages to any nodes; a message over a link that is down
// is dropped by the network). Then every client is handed what reached it:
// Receive(r, in) with the messages ordered by sender, so floating-point sums
// never depend on arrival order. A client never learns what it "should"
// have received. Messages carry a header (sender, round, phase) and a typed
// Payload (Kind, vector, push-sum mass), which fault wrappers use without
// knowing an algorithm's layout.
//
// A payload vector is read-only once sent and stays valid until the
// sender's next-but-one round, so behaviours double-buffer their payloads
// and nothing is copied per receiver.
//
// # Clients and programs
//
// A Client lives for the whole run and returns a behaviour for each phase
// (Enter); a Program schedules the phases (pdbo.Alg1 is the PDBO paper's
// Alg. 1) and both drivers execute it, the actor runtime inside its
// supervisor. Algorithms register in Algorithms and are planned from a
// Setup; those whose parameters are top-level scenario sections
// (SectionOwner) read them through Setup.Sections. Plug-ins: Faults (client
// behaviours assigned per client). Algorithm families live in
// subpackages (optim/pdbo, …) and import this one, never the reverse.
//
// # Notation
//
// Names follow pdbo-hgp-stochastic-directed (the PDBO paper): z and omega are
// the push-sum pair y = (z, ω) with debiased parameters x = z/ω (Eq. 2), pBar
// and deltaBar are the estimates p̄_ij and δ̄_{j→i} of Alg. 2, and the two SGP
// variants are Eq. (4a) (local step before communication, Assran et al.) and
// Eq. (4b) (after communication, Nedić & Olshevsky).
//
// It may import graph, models, compress, internal packages and gonum; never
// an algorithm family, scenarios, run, actors or wire.
package optim
