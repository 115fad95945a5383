package actors

import (
	"slices"

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

// outbox holds one client's posts, one per round parity. The post of round
// k is a single push that every receiver's mailbox gets the same pointer to,
// so a round costs no allocation per link. It is rewritten when the client
// opens round k+2, which happens after every receiver has filed it: a
// receiver files its round-k pushes before it acknowledges step k+1 (mailbox
// FIFO, see the package doc), and step k+2 is only sent after all of those
// acknowledgements.
type outbox struct {
	posts [2]push
}

func newOutbox(n int) *outbox {
	ob := &outbox{}
	for i := range ob.posts {
		ob.posts[i].recv = make([]int, 0, n)
		ob.posts[i].weights = make([]float64, n)
	}
	return ob
}

// deliver asks beh for its payload of round r and pushes it over the links
// realized at tick. The self-delivery goes straight to self (no mailbox hop).
func (rt *router) deliver(ctx actor.Context, from int, epoch uint64, r int, tick uint64, beh optim.Behaviour, ob *outbox, self *inbox) optim.Traffic {
	p := &ob.posts[r&1]
	p.recv = rt.net.Realize(from, tick, p.recv)
	p.weights = rt.net.PushWeights(from, p.recv, p.weights)
	data := beh.Send(r, p.recv, p.weights)
	var tr optim.Traffic
	if data == nil {
		return tr
	}
	p.epoch, p.round, p.from, p.data = epoch, r, from, data
	for k, j := range p.recv {
		if j == from {
			self.add(optim.Message{From: from, Weight: p.weights[k], Data: data})
			continue
		}
		ctx.Send(rt.pids[j], p)
	}
	tr.Count(from, p.recv, len(data))
	return tr
}

// weightTo returns the push weight of receiver j.
func (p *push) weightTo(j int) (float64, bool) {
	k, ok := slices.BinarySearch(p.recv, j)
	if !ok {
		return 0, false
	}
	return p.weights[k], true
}
