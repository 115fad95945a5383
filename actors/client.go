package actors

import (
	"fmt"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/optim"
)

// client is the actor shell around one client's behaviours. Its Receive only
// forwards to the current phase's behaviour.
type client struct {
	id         int
	n          int
	router     *router
	supervisor *actor.PID

	phase  string
	epoch  uint64 // of the current phase; pushes of other phases are stale
	beh    optim.Behaviour
	inbox  [2]inbox // by round parity: round k+1 pushes may arrive before step k+1
	open   int      // the round whose pushes are being collected
	closed bool     // the last phase ran to its final step (all posts consumed)
	outbox *outbox
}

func newClient(id, n int, rt *router, sup *actor.PID) *client {
	return &client{id: id, n: n, router: rt, supervisor: sup, closed: true,
		inbox: [2]inbox{newInbox(n), newInbox(n)}, outbox: newOutbox(n)}
}

func (c *client) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *push:
		c.collect(ctx, m)
	case *step:
		ctx.Send(c.supervisor, c.step(ctx, m))
	case *enterPhase:
		c.phase, c.epoch, c.beh, c.open = m.name, m.epoch, m.beh, 0
		c.inbox[0].reset()
		c.inbox[1].reset()
		if !c.closed {
			// Receivers of an aborted phase may still hold our posts: never
			// rewrite them, start from fresh buffers.
			c.outbox = newOutbox(c.n)
		}
		c.closed = false
	}
}

// collect files one push into the inbox of its round.
func (c *client) collect(ctx actor.Context, m *push) {
	if m.epoch != c.epoch {
		return // left over from an aborted phase
	}
	var err error
	switch {
	case m.round != c.open && m.round != c.open+1:
		// Cannot happen with the step protocol; report rather than mix rounds.
		err = fmt.Errorf("push from client %d for round %d while collecting round %d", m.from, m.round, c.open)
	default:
		if w, ok := m.weightTo(c.id); !ok {
			err = fmt.Errorf("push from client %d for round %d does not list client %d", m.from, m.round, c.id)
		} else if !c.inbox[m.round&1].add(optim.Message{From: m.from, Weight: w, Data: m.data}) {
			err = fmt.Errorf("second push from client %d for round %d", m.from, m.round)
		}
	}
	if err != nil {
		ctx.Send(c.supervisor, &ack{client: c.id, step: -1, round: m.round, err: err})
	}
}

// step runs one step with panics turned into errors that name the round.
func (c *client) step(ctx actor.Context, m *step) (a *ack) {
	a = &ack{client: c.id, step: m.step}
	defer func() {
		if r := recover(); r != nil {
			a.err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if m.step > 0 {
		r := m.step - 1
		a.round = r
		box := &c.inbox[r&1]
		err := c.beh.Receive(r, box.take()) // ordered by sender
		box.release()
		if err != nil {
			a.err = err
			return a
		}
		if m.eval {
			if o, ok := c.beh.(optim.Observer); ok {
				a.stats = o.Observe()
			}
		}
		c.open = m.step
	}
	if m.step < m.rounds {
		a.round = m.step
		a.traffic = c.router.deliver(ctx, c.id, c.epoch, m.step, m.tick, c.beh, c.outbox, &c.inbox[m.step&1])
	} else {
		c.closed = true
	}
	return a
}
