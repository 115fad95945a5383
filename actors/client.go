package actors

import (
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/optim"
)

// client is the actor shell around one client's behaviours. Its Receive only
// forwards to the current phase's behaviour.
type client struct {
	id         int
	router     *router
	supervisor *actor.PID

	phase  string
	beh    optim.Behaviour
	inbox  [2][]optim.Message // by round parity: round k+1 pushes may arrive before step k+1
	open   int                // the round whose pushes are being collected
	outbox outbox
}

func (c *client) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *enterPhase:
		c.phase, c.beh, c.open = m.name, m.beh, 0
		c.inbox[0], c.inbox[1] = c.inbox[0][:0], c.inbox[1][:0]
	case *push:
		if m.round != c.open && m.round != c.open+1 {
			// Cannot happen with the step protocol; report rather than mix rounds.
			ctx.Send(c.supervisor, &ack{client: c.id, step: -1, round: m.round,
				err: fmt.Errorf("push from client %d for round %d while collecting round %d", m.from, m.round, c.open)})
			return
		}
		c.inbox[m.round&1] = append(c.inbox[m.round&1], optim.Message{From: m.from, Weight: m.weight, Data: m.data})
	case *step:
		ctx.Send(c.supervisor, c.step(ctx, m))
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
		in := c.inbox[r&1]
		// One message per sender per round, so the order is total.
		slices.SortFunc(in, func(a, b optim.Message) int { return a.From - b.From })
		err := c.beh.Receive(r, in)
		clear(in) // drop references to other clients' buffers
		c.inbox[r&1] = in[:0]
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
		a.traffic = c.router.deliver(ctx, c.id, m.step, m.tick, c.beh, &c.outbox, &c.inbox[m.step&1])
	}
	return a
}
