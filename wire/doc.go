// Package wire defines how hgpsim's runtime messages are encoded when they
// leave a process: protobuf messages (hgpsim.proto, package hgpsim.wire,
// with the generated Go code in hgpsim.pb.go) whose fields carry the
// plain-data types of package optim in the encoding of internal/codec.
//
// # What crosses where
//
// The actor runtime (package actors) has a supervisor and actors hosting
// the clients. When clients run in worker processes (hgpsim worker), the
// supervisor sends a worker Setup (the scenario, its block of clients and
// every worker's address and block) and gets Hosted back. Per step it
// sends each worker one WorkerStep — control only: the phase (at step 0),
// the tick, whether to evaluate — and each worker answers with one
// WorkerAck for its block: a digest of the realized links, counts of what
// it filed, its clients' stats when evaluated (without their parameters;
// worker 0 adds the consensus distance, from the PeerParams the other
// workers send it) and results after a phase's last round, and the text
// of an error if one failed. The payloads go
// from worker to worker: each worker sends every other one PeerBatch per
// round with what its clients addressed to that worker's clients (the
// envelopes, each distinct payload once). Workers send Heartbeats while a
// run is attached, and Release ends it.
//
// # One codec, no mirror
//
// The protobuf messages are the envelopes proto.actor's remote transport
// needs; what they carry of package optim — optim.PhaseSpec, Message and
// Envelope headers, Stats, Result — crosses as `bytes` fields holding the
// Go values in the codec's encoding, numbered by the types' `wire` tags.
// No conversion mirrors those types field by field: a field added to one
// crosses once it has a tag, and an algorithm's phase arguments and
// results (PhaseSpec.Args, Result.Data) are its own types, encoded by
// optim and moved here as bytes, untouched. A bytes field holding a
// message encodes exactly as that message field would, so the bytes are
// what generated code for the optim types would give (a test checks them
// against bytes the generated conversions produced).
//
// The one exception is the payload tables' entries, a generated Payload
// message (kind, vector, mass): the vectors are the bulk of every round,
// and as a generated message a vector is written straight from the
// sender's memory and decoded once, where a bytes field would copy it
// once more on each side (twice the memory per worker step at d = 7850).
//
// A payload sent to many receivers — a push to every link — is one vector
// shared by its envelopes; on the wire it is one entry of a payload table
// (PeerBatch.payloads; also WorkerStep.payloads and WorkerAck.payloads for
// the late messages of a phase cut in parts) that envelopes and messages
// refer to by a reference field (payload_ref), so it is encoded once per
// batch instead of once per receiver, and decodes into one shared vector
// again.
//
// # In-process fast path
//
// When all actors live in one process, package actors sends Go structs
// through the mailboxes and shares payload vectors read-only between
// sender, supervisor and receivers (see optim.Payload): nothing is encoded
// or copied. This package is for the boundary of a process only.
//
// # Exactness
//
// A value encoded and decoded is equal to the original bit for bit: every
// float64 and float32 keeps its bits (±0, subnormals, infinities and NaN payloads
// included) and every integer its value (one that does not fit its Go
// type fails to decode). The one thing proto3 cannot tell apart is an
// empty list from an absent one, so the rule is: a zero-length vector,
// list or byte string comes back nil, whether it was nil or empty when
// sent. Errors cross as their text only.
//
// Encoding gives the same bytes for the same value every time. A Payload
// with a d-vector encodes in 8·d bytes (4·d in float32) plus at most 16
// (kind, mass, and the vector's tag and length) for d below 2²⁵: 62,815
// bytes for d = 7850. In a batch each envelope adds its header (receiver, push
// weight, payload reference) and a length prefix, about 15 bytes.
//
// It may import optim and protobuf; never an algorithm family, scenarios,
// run or actors.
package wire
