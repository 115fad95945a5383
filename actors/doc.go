// Package actors is the production runtime of hgpsim on proto.actor.
//
// It runs the behaviours of package optim unchanged: one actor per client, a
// supervisor actor that drives the rounds of each phase, and a router that
// realizes the round's edges and delivers and counts what crosses them. The
// sequential driver in optim is the reference: for the same network, phase
// and seed this runtime must produce bit-identical states and events.
//
// # Rounds
//
// The supervisor advances a phase in steps. Step k tells every client to
// close round k−1 (hand the messages it got, sorted by sender, to its
// behaviour's Receive, and evaluate if asked) and then to open round k (call
// Send and push the payload over the links realized for it). A client
// acknowledges a step once its pushes are posted; when all n have acknowledged
// step k, the supervisor reports the closed round and starts step k+1. A
// round therefore closes by the supervisor's word, never by a receiver
// counting arrivals: with dropped links a receiver cannot know what it should
// have received.
//
// Why this is enough in one process: proto.actor posts a local message into
// the target's mailbox synchronously, and a mailbox is FIFO. Every push of
// round k is posted before its sender acknowledges step k, and step k+1 is
// posted after all acknowledgements, so it reaches each mailbox after all of
// that mailbox's round-k pushes. A push of round k+1 can overtake step k+1
// (its sender may run first), so clients keep one inbox per round parity.
// Across processes (proto.actor remote) that FIFO argument no longer holds
// and acknowledgements would have to carry per-receiver counts.
//
// # Failure
//
// A panic inside a behaviour is recovered by the client and reported with
// client, phase and round; the supervisor strategy for clients stops (never
// restarts: a restart would silently rebuild a client without its state). A
// round that makes no progress within the timeout fails the run and names the
// clients that did not answer.
package actors
