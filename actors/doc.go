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
// close round k−1 (hand what reached it, sorted by sender, to its
// behaviour's Receive, and evaluate if asked) and then to open round k (call
// Send on the links the router realizes for it). A client answers a step
// with an acknowledgement that carries its post: the payload with its
// realized receivers and push weights. When all n have acknowledged step k,
// the supervisor reports the closed round, has the router deliver every post
// of round k into the receivers' inboxes, visiting senders in ascending
// order (so every inbox is sorted by sender without sorting), and sends step
// k+1 with those inboxes. A round therefore closes by the supervisor's word,
// never by a receiver counting arrivals: with dropped links a receiver
// cannot know what it should have received.
//
// Deliveries ride on the step and acknowledgement messages rather than going
// from client to client: a round costs 2n mailbox messages instead of one
// per realized link (about 0.6·n² on the quickstart network), and the
// delivery order is fixed by construction instead of by mailbox FIFO. The
// price is that the router's O(links) filing runs on the supervisor between
// steps; docs/performance.md has the numbers. The inboxes are rewritten in
// place each round: their readers have all acknowledged before the next
// delivery. Payloads are shared, never copied (see optim.Message).
//
// Client and supervisor mailboxes run on a pool of long-lived goroutines
// (workers) instead of proto.actor's goroutine per mailbox wake-up, so that a
// step does not start on a fresh, small stack every round.
//
// # Failure
//
// A panic inside a behaviour is recovered by the client and reported with
// client, phase and round; the supervisor strategy for clients stops (never
// restarts: a restart would silently rebuild a client without its state). A
// round that makes no progress within the timeout fails the run and names the
// clients that did not answer.
package actors
