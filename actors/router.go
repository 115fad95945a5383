package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
)

// router realizes a sender's links for a round and delivers its payload over
// the ones that are up. It is shared read-only by all clients; the scratch
// buffers live in each client's outbox.
type router struct {
	net  *graph.Network
	pids []*actor.PID
}

// outbox is one client's scratch space for routing.
type outbox struct {
	recv    []int
	weights []float64
}

// deliver asks beh for its payload of round r and pushes it over the links
// realized at tick. The self-delivery goes straight to self (no mailbox hop).
func (rt *router) deliver(ctx actor.Context, from int, r int, tick uint64, beh optim.Behaviour, ob *outbox, self *[]optim.Message) optim.Traffic {
	ob.recv = rt.net.Realize(from, tick, ob.recv)
	w := rt.net.PushWeights(from, ob.recv, ob.weights)
	data := beh.Send(r, ob.recv, w)
	var tr optim.Traffic
	if data == nil {
		return tr
	}
	for k, j := range ob.recv {
		if j == from {
			*self = append(*self, optim.Message{From: from, Weight: w[k], Data: data})
			continue
		}
		ctx.Send(rt.pids[j], &push{round: r, from: from, weight: w[k], data: data})
	}
	tr.Count(from, ob.recv, len(data))
	return tr
}
