package actors

import (
	"hgpsim/optim"
)

// enterPhase hands a client its behaviour for the next phase.
type enterPhase struct {
	name string
	beh  optim.Behaviour
}

// step asks a client to close round step-1 (when step > 0) and open round
// step (when step < rounds). One step value goes to all clients.
type step struct {
	epoch  uint64 // counts the phases of a runtime; acks echo it
	step   int
	rounds int
	tick   uint64            // edge-realization tick of round step
	eval   bool              // evaluate after closing round step-1
	in     [][]optim.Message // in[j]: what reached client j in round step-1, by sender; read-only
}

// ack answers a step.
type ack struct {
	client  int
	epoch   uint64
	step    int
	round   int // the round being closed or opened when err happened
	post    post
	traffic optim.Traffic
	stats   optim.Stats
	err     error
}

// runPhase asks the supervisor to run a phase and answer on done.
type runPhase struct {
	phase     *optim.Phase
	sink      optim.Sink
	startTick uint64
	done      chan<- phaseResult
}

type phaseResult struct {
	traffic optim.Traffic
	err     error
}

// abort stops the running phase (context cancelled).
type abort struct{ err error }

// clientFailed is posted by the stop strategy when a client actor crashed
// outside a behaviour call.
type clientFailed struct {
	client int
	reason interface{}
}
