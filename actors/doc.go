// Package actors is the production runtime of hgpsim on proto.actor.
//
// It runs the clients and programs of package optim unchanged: actors that
// each host a contiguous group of clients (a group: one per client at the
// extreme; by default one group on one core and four per core otherwise,
// Options.Groups), each client built in its actor with the run's factory,
// and a supervisor actor that runs the optim.Program — asking it for each phase,
// driving the phase's rounds, routing what the clients send, and reporting
// to the sink. The sequential driver in optim is the reference: for the same
// network, program and seed this runtime must produce bit-identical states,
// events and reports.
//
// # Rounds
//
// The supervisor advances a phase in steps. Step 0 also enters the phase
// (optim.Client.Enter). Step k tells every client to close round k−1 (hand
// what reached it, sorted by sender, to its behaviour's Receive, and
// evaluate if asked) and then to open round k (Send through its optim.Port,
// which realizes its links). A client answers a step with an
// acknowledgement that carries its port: what it addressed in round k. When
// all n have acknowledged step k, the supervisor reports the closed round,
// delivers every envelope of round k into the receivers' inboxes
// (optim.Deliver, senders in ascending order, so every inbox is sorted by
// sender without sorting), and sends step k+1 with those inboxes. A round therefore closes by the supervisor's word,
// never by a receiver counting arrivals: with dropped links a receiver
// cannot know what it should have received.
//
// Deliveries ride on the step and acknowledgement messages rather than going
// from client to client: a round costs two mailbox messages per group (one
// step, one groupAck carrying its clients' acknowledgements) instead of one
// per realized link (about 0.6·n² on the quickstart network), and the
// delivery order is fixed by construction instead of by mailbox FIFO. A
// group first closes the round of each of its clients, then opens the next
// for each, as the sequential driver does; the clients are independent
// between deliveries, so neither the grouping nor this order changes a
// bit of the results. The
// price is that the router's O(links) filing runs on the supervisor between
// steps; docs/performance.md has the numbers. The inboxes are rewritten in
// place each round: their readers have all acknowledged before the next
// delivery. Payloads are shared, never copied (see optim.Message).
//
// Client and supervisor mailboxes run on a pool of long-lived goroutines
// (workers) instead of proto.actor's goroutine per mailbox wake-up, so that a
// step does not start on a fresh, small stack every round.
//
// The grouping applies in one process only: on worker processes every
// client keeps an actor of its own (see below).
//
// # Worker processes
//
// With Options.Workers the client actors live in other processes
// (StartWorker; hgpsim worker), in contiguous blocks. Each worker builds
// its clients from the scenario it is sent (BuildFunc), so no client state
// crosses at start. The supervisor keeps control only: per step it sends
// each worker one wire.WorkerStep (the phase at step 0, the tick, whether
// to evaluate) and gets one wire.WorkerAck back (a digest of the links
// its clients realized, which the supervisor checks against its own
// realization; counts of what it filed; stats at evaluations, without
// the parameters; results after a phase) — bytes that do not depend on
// the model's size but for the results. At an evaluation the other
// workers send worker 0 their clients' parameters (wire.PeerParams), and
// worker 0 reports the consensus distance, computed in client order with
// the bits of one process (optim.ConsensusOf). The
// payloads go from worker to worker: after a step each worker sends every
// other worker one wire.PeerBatch with what its clients addressed to that
// worker's clients, each distinct payload once (empty when there is
// nothing, so that a receiver knows when it has everything), and keeps
// what is addressed to its own. A worker files its clients' inboxes with
// an optim.Router of its own, senders in ascending order, as the
// in-process supervisor does (see blockRun), and steps them when the
// supervisor has opened the round and every batch of the round before has
// arrived; results are byte-identical to one process. Workers beat while
// a run is attached; a lost connection (to the supervisor or between two
// workers), a worker silent for the round timeout, or a call running 10
// round timeouts fails the run naming the worker and its clients. A
// process runs one proto.actor remote: every supervisor of the process
// shares one actor system (supervisorHost).
//
// # Failure
//
// A panic inside a behaviour is recovered by the client and reported with
// client, phase and round (a group goes on with its other clients; the
// supervisor fails the run on the first error it reads). The supervisor
// strategy for client actors stops (never restarts: a restart would
// silently rebuild a client without its state). A panic in the sink, the
// program or the routing is recovered by the supervisor and fails the run;
// the supervisor itself runs under a guardian strategy that stops it and
// answers the caller. A round that makes no progress within the timeout
// fails the run and names the clients holding it up: those inside a call
// (the watchdog watches each call under its client's index, so a hung call
// names its client within a group), or else those that have not answered.
//
// It may import optim, graph, wire, proto.actor, gRPC and protobuf; never
// scenarios, run or an algorithm family.
package actors
