package actors

import (
	"sync/atomic"

	"hgpsim/optim"
)

// The messages below stay in one process and keep the zero-copy fast path
// the issue allows: payload vectors and a client's port are shared
// read-only between the client and the supervisor instead of being copied.
// Everything they carry is plain data (package wire defines the protobuf
// encoding for messages that leave the process).

// built tells the supervisor that a client actor has built its client
// (optim.ClientFactory, called inside the actor) or failed to.
type built struct {
	client int
	err    error
}

// step asks a client to enter a phase (step 0), close round step-1 (when
// step > 0), and open round step (when step < rounds); after the last round
// it also collects the client's phase result. One step value goes to all
// clients.
type step struct {
	epoch uint64 // counts the phases of a runtime; acks echo it
	step  int
	spec  *optim.PhaseSpec
	tick  uint64            // edge-realization tick of round step
	eval  bool              // evaluate after closing round step-1
	in    [][]optim.Message // in[j]: what reached client j in round step-1, by sender; read-only
}

// ack answers a step.
type ack struct {
	client int
	epoch  uint64
	step   int
	round  int         // the round being closed or opened when err happened
	port   *optim.Port // the round opened, with what the client addressed; read by what files the round (the supervisor, or the worker hosting the client) until the next step
	stats  optim.Stats
	result optim.Result
	err    error
}

// groupAck answers a step for all the clients of a group, in client order.
// The supervisor keeps nothing of it and sets read when done with it; the
// group then reuses it for its next step.
type groupAck struct {
	epoch uint64
	acks  []ack
	read  atomic.Bool
}

// runProgram asks the supervisor to run a program and answer on done.
type runProgram struct {
	prog      optim.Program
	sink      optim.Sink
	startTick uint64
	done      chan<- runResult
}

type runResult struct {
	traffic optim.Traffic
	tick    uint64
	err     error
	wire    *WireTraffic // with remote clients
}

// abort stops the running program (context cancelled).
type abort struct{ err error }

// clientFailed is posted by the stop strategy when a client actor crashed
// outside a behaviour call.
type clientFailed struct {
	client int
	reason interface{}
}
