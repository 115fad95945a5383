// Package wire defines how hgpsim's runtime messages are encoded when they
// leave a process: protobuf messages (hgpsim.proto, package hgpsim.wire,
// with the generated Go code in hgpsim.pb.go) and exact conversions to and
// from the plain-data types of package optim.
//
// # What crosses where
//
// The actor runtime (package actors) has a supervisor and one actor per
// client. Between them travel:
//
//   - supervisor → client: Step, one per client per step. At step 0 it
//     carries the PhaseSpec (with its Args and, when the program gives them,
//     each client's own inputs); at step k > 0 it carries the Messages that
//     reached the client in round k−1, sorted by sender, and whether to
//     evaluate.
//   - client → supervisor: Built once, when the client has been made where
//     it lives; then an Ack per Step with the round's realized links and the
//     Envelopes the client addressed, its Stats when evaluated, its Result
//     after a phase's last round, and the text of its error if it failed.
//
// Messages between clients (Payload with its header, Message on delivery,
// Envelope as addressed) ride on Ack and Step: the supervisor's router
// delivers them, so client-to-client traffic never needs a connection of its
// own. Traffic and DeliveryRecord are the counts and the per-link truth a
// supervisor reports, encoded here so that reports can cross too.
//
// # In-process fast path
//
// When all actors live in one process, package actors sends Go structs
// through the mailboxes and shares payload vectors read-only between
// sender, supervisor and receivers (see optim.Payload): nothing is encoded
// or copied. This package is for the boundary of a process only, and its
// conversions keep the same spirit: they share vectors (and maps of
// float64) with their input instead of copying them, so a converted value
// must be treated as read-only, like a payload, and lives as long as
// either side is in use.
//
// # Remote clients
//
// proto.actor's remote transport sends protobuf messages, so these messages
// are what the actor protocol becomes when clients run in worker processes
// (hgpsim worker; package actors): the supervisor sends a worker Setup
// (the scenario and its block of clients) and gets Hosted back; per round
// it sends each worker one WorkerStep with the inboxes of all its clients,
// the worker hands each client actor its inbox, and each client answers
// with an Ack; workers send Heartbeats while a run is attached, and
// Release ends it. Step, one client's step, is the same order for a single
// client.
//
// A payload sent to many receivers — a push to every link — is one vector
// shared by its envelopes; on the wire it is one entry of a payload table
// (Ack.payloads, WorkerStep.payloads) that envelopes and messages refer to
// by payload_ref, so it is encoded once per ack and once per worker step
// instead of once per receiver, and decodes into one shared vector again.
//
// # Exactness
//
// A value converted to wire, encoded, decoded and converted back is equal
// to the original bit for bit: every float64 keeps its bits (±0, subnormals,
// infinities and NaN payloads included) and every integer its value. The
// one thing proto3 cannot tell apart is an empty list or map from an absent
// one, so the rule is: a zero-length vector, list or map comes back nil,
// whether it was nil or empty when sent. Keys of maps of vectors are kept
// even when their vector is empty. Errors cross as their text only.
//
// Encoding with Marshal (deterministic: map entries in key order) gives the
// same bytes for the same value every time. A Payload with a d-vector
// encodes in 8·d bytes plus at most 16 (kind, mass, and the vector's tag and
// length) for d below 2²⁵: 62,815 bytes for d = 7850. In a Step's inbox
// each Message adds its header (sender, round, phase name, push weight) and
// two length prefixes: 28 bytes with a five-letter phase name.
//
// It may import optim and protobuf; never an algorithm family, scenarios,
// run or actors.
package wire
