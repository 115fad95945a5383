package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
)

// router is the simulated network. Senders ask it which of their links are
// up in a round (open, run by each client in parallel); the supervisor then
// has it deliver every post of the round over those links (deliver, run once
// per round). It is read-only after New except for the delivery table, which
// only the supervisor touches between steps.
type router struct {
	net  *graph.Network
	pids []*actor.PID

	in [][]optim.Message // in[j]: what reached j in the last delivered round, by sender
}

// post is what a client pushes in one round: its payload and the realized
// receivers (ascending, self included) with their push weights. A post is
// only read by the supervisor between the sender's acknowledgement and the
// next step, so each client needs just one.
type post struct {
	recv    []int
	weights []float64
	data    []float64 // nil: the client sends nothing this round
}

// open asks beh for its payload of round r and realizes its links at tick.
func (rt *router) open(from, r int, tick uint64, beh optim.Behaviour, p *post) post {
	p.recv = rt.net.Realize(from, tick, p.recv)
	p.weights = rt.net.PushWeights(from, p.recv, p.weights)
	p.data = beh.Send(r, p.recv, p.weights)
	if p.data == nil {
		return post{}
	}
	return *p
}

// deliver files every post of a round into the inboxes of its receivers and
// returns them. Visiting senders in ascending order sorts every inbox by
// sender, so floating-point sums never depend on timing. The previous
// round's inboxes are overwritten in place: their readers (the clients'
// Receive of that round) have all acknowledged before this is called.
func (rt *router) deliver(posts []post) [][]optim.Message {
	if len(rt.in) != len(posts) {
		rt.in = make([][]optim.Message, len(posts))
	}
	for j := range rt.in {
		rt.in[j] = rt.in[j][:0]
	}
	for i, p := range posts {
		if p.data == nil {
			continue
		}
		for k, j := range p.recv {
			rt.in[j] = append(rt.in[j], optim.Message{From: i, Weight: p.weights[k], Data: p.data})
		}
	}
	return rt.in
}

// forget drops the inboxes (and with them every reference to payloads) at
// the end of a phase. A client still reading them after a failed phase keeps
// its own view; the next phase gets new ones.
func (rt *router) forget() { rt.in = nil }
