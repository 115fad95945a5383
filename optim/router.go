package optim

import (
	"fmt"

	"hgpsim/graph"
	"hgpsim/internal/vec"
)

// Router files what clients send into the receivers' inboxes, round by
// round, for both drivers (the actor runtime's supervisor owns one). Within
// a round, messages that arrive late (delayed by a failure process) come
// first, in the order they were sent, then the round's own messages in
// sender order: calling Deliver for senders in ascending order keeps every
// inbox sorted by sender without sorting, and a sender's own messages keep
// the order it sent them in. Floating-point sums therefore never depend on
// timing.
type Router struct {
	net   *graph.Network
	inbox [][]Message
	late  []LateMessage // waiting, in the order they were sent
	last  bool          // the round opened last is the last of its phase
}

// LateMessage is a delayed message waiting in a router: due at tick Due
// for client To. Its payload is a copy, since the sender reuses its
// buffers two rounds later; it is plain data, so a checkpoint can save it.
type LateMessage struct {
	Due    uint64
	To     int
	Pushed bool
	Msg    Message
}

// NewRouter returns a router for the clients of nw.
func NewRouter(nw *graph.Network) *Router {
	return &Router{net: nw, inbox: make([][]Message, nw.N)}
}

// Open starts the round at tick: it clears the inboxes and files the late
// messages due by then whose receiver is online (in the last round of a
// phase, last, all of them, so that nothing sent in a phase arrives in
// another). rec, when not nil, counts the arrivals and the clients online.
func (r *Router) Open(tick uint64, last bool, rec *DeliveryRecord) {
	r.last = last
	for j := range r.inbox {
		r.inbox[j] = r.inbox[j][:0]
		if rec != nil && !r.net.Offline(j, tick) {
			rec.Online[j]++
		}
	}
	if len(r.late) == 0 {
		return
	}
	keep := r.late[:0]
	for _, m := range r.late {
		if (m.Due <= tick || last) && !r.net.Offline(m.To, tick) {
			r.inbox[m.To] = append(r.inbox[m.To], m.Msg)
			if rec != nil && m.Pushed {
				rec.Count[m.Msg.From][m.To]++
			}
			continue
		}
		keep = append(keep, m)
	}
	clear(r.late[len(keep):])
	r.late = keep
}

// Deliver files the envelopes sender from addressed through its port this
// round, dropping those addressed over a link that is down, holding back
// those a failure process delays, and counting the traffic. rec, when not
// nil, records the pushed weights (sender side) and the arrivals.
func (r *Router) Deliver(from int, p *Port, t *Traffic, rec *DeliveryRecord) {
	// A payload sent to several receivers is stored once, and so is its
	// copy for those a failure process delays.
	var src, held []float64
	var src32, held32 []float32
	for i := range p.out {
		e := &p.out[i]
		if e.To < 0 || e.To >= len(r.inbox) || !p.Up(e.To) {
			t.Dropped++
			continue
		}
		msg := Message{From: from, Round: p.round.Index, Phase: p.round.Phase, Weight: e.Weight, Payload: e.Payload}
		if e.To != from {
			t.Messages++
			t.Bytes += messageBytes(e)
		}
		if rec != nil && e.Pushed {
			rec.WeightSum[from][e.To] += e.Weight
		}
		if d := r.net.Delay(from, e.To, p.tick); d > 0 && !r.last {
			msg.Vec = holdCopy(&src, &held, msg.Vec)
			msg.Vec32 = holdCopy(&src32, &held32, msg.Vec32)
			r.late = append(r.late, LateMessage{Due: p.tick + uint64(d), To: e.To, Pushed: e.Pushed, Msg: msg})
			continue
		}
		r.inbox[e.To] = append(r.inbox[e.To], msg)
		if rec != nil && e.Pushed {
			rec.Count[from][e.To]++
		}
	}
}

// Late returns the late messages waiting, in the order they were sent;
// the slice is the caller's, the payloads are shared and never written.
func (r *Router) Late() []LateMessage { return append([]LateMessage(nil), r.late...) }

// Restore puts back late messages Late returned (from a checkpoint), to
// be delivered as if they had never left the router.
func (r *Router) Restore(late []LateMessage) error {
	for _, m := range late {
		if m.To < 0 || m.To >= len(r.inbox) || m.Msg.From < 0 || m.Msg.From >= len(r.inbox) {
			return fmt.Errorf("a late message from %d to %d in a network of %d nodes", m.Msg.From, m.To, len(r.inbox))
		}
	}
	r.late = append(r.late[:0], late...)
	return nil
}

// Inboxes returns what reached each client in the round opened last; the
// slices are reused by the next Open.
func (r *Router) Inboxes() [][]Message { return r.inbox }

// Close ends a phase: late messages still waiting (for a receiver that
// stayed offline to the end) are lost and counted as dropped, and every
// reference to a payload is released.
func (r *Router) Close(t *Traffic) {
	t.Dropped += int64(len(r.late))
	clear(r.late)
	r.late = r.late[:0]
	// Fresh inboxes rather than clearing these: when a phase fails, clients
	// of the actor runtime may still be reading the round's inboxes.
	r.inbox = make([][]Message, len(r.inbox))
}

// DeliveryRecord is what the network actually delivered during a phase:
// per link i→j the sum of the push weights delivered and the number of
// rounds with a delivery, over Rounds rounds. It is the truth against which
// the clients' Alg. 2 estimates p̄_ij and δ̄_{j→i} are reported, so that a
// client that sends less than the graph allows (a straggler) does not show
// up as estimation error.
type DeliveryRecord struct {
	Rounds    int
	WeightSum [][]float64
	Count     [][]float64
	// Online counts the rounds each client was online: the rounds over
	// which its Alg. 2 estimates average (an offline client counts nothing).
	Online []float64
}

// NewDeliveryRecord returns an empty record for n clients.
func NewDeliveryRecord(n int) *DeliveryRecord {
	r := &DeliveryRecord{WeightSum: make([][]float64, n), Count: make([][]float64, n), Online: make([]float64, n)}
	for i := range r.WeightSum {
		r.WeightSum[i] = make([]float64, n)
		r.Count[i] = make([]float64, n)
	}
	return r
}

// holdCopy returns the copy of v a delayed message carries (nil for an
// empty v): *held when v is still *src, the vector copied last, else a new
// copy, which becomes *held.
func holdCopy[F vec.Float](src, held *[]F, v []F) []F {
	if len(v) == 0 {
		return nil
	}
	if len(*src) != len(v) || &(*src)[0] != &v[0] {
		*src, *held = v, append([]F(nil), v...)
	}
	return *held
}
