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
	router     *router
	supervisor *actor.PID

	phase  string
	beh    optim.Behaviour
	outbox post // this client's post of the round it opened last
}

func (c *client) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *step:
		ctx.Send(c.supervisor, c.step(m))
	case *enterPhase:
		c.phase, c.beh = m.name, m.beh
	}
}

// step runs one step with panics turned into errors that name the round.
func (c *client) step(m *step) (a *ack) {
	a = &ack{client: c.id, epoch: m.epoch, step: m.step}
	defer func() {
		if r := recover(); r != nil {
			a.err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if m.step > 0 {
		r := m.step - 1
		a.round = r
		if err := c.beh.Receive(r, m.in[c.id]); err != nil { // ordered by sender
			a.err = err
			return a
		}
		if m.eval {
			if o, ok := c.beh.(optim.Observer); ok {
				a.stats = o.Observe()
			}
		}
	}
	if m.step < m.rounds {
		a.round = m.step
		a.post = c.router.open(c.id, m.step, m.tick, c.beh, &c.outbox)
		a.traffic.Count(c.id, a.post.recv, len(a.post.data))
	}
	return a
}
