package actors

import (
	"fmt"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
)

// client is the actor shell around one optim.Client. It builds the client
// itself, from the run's factory, and its Receive only steps the current
// phase's behaviour.
type client struct {
	id         int
	net        *graph.Network
	factory    optim.ClientFactory
	supervisor *actor.PID
	watch      *watchdog

	c     optim.Client
	port  *optim.Port
	phase *optim.PhaseSpec
	beh   optim.Behaviour
}

func (c *client) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		ctx.Send(c.supervisor, &built{client: c.id, err: c.build()})
	case *step:
		c.watch.begin(c.id)
		a := c.step(m, m.in[c.id])
		c.watch.end(c.id)
		ctx.Send(c.supervisor, a)
	}
}

func (c *client) build() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while building: %v\n%s", r, debug.Stack())
		}
	}()
	c.port = optim.NewPort(c.net, c.id)
	c.c, err = c.factory(c.id)
	return err
}

// step runs one step with panics turned into errors that name the round;
// in is what reached this client in round m.step-1, ordered by sender.
func (c *client) step(m *step, in []optim.Message) (a *ack) {
	a = &ack{client: c.id, epoch: m.epoch, step: m.step, round: m.step - 1}
	defer func() {
		if r := recover(); r != nil {
			a.err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	if m.step == 0 {
		c.phase = m.spec
		beh, err := c.c.Enter(m.spec)
		if err != nil {
			a.err = err
			return a
		}
		c.beh = beh
	}
	rounds := c.phase.Rounds
	if m.step > 0 && c.beh != nil {
		// An offline client does not run; it is evaluated all the same.
		if !c.port.Round().Offline {
			if err := c.beh.Receive(c.port.Round(), in); err != nil {
				a.err = err
				return a
			}
		}
		if m.eval {
			if o, ok := c.beh.(optim.Observer); ok {
				a.stats = o.Observe()
			}
		}
	}
	if m.step < rounds {
		a.round = m.step
		round := c.port.Open(c.phase.Name, m.step, m.tick)
		if c.beh != nil && !round.Offline {
			if err := c.beh.Send(round, c.port); err != nil {
				a.err = err
				return a
			}
		}
		a.port = c.port
	}
	if m.step == rounds {
		if r, ok := c.beh.(optim.Resulter); ok {
			a.result = r.Result()
		}
	}
	return a
}
