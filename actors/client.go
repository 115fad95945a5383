package actors

import (
	"fmt"
	"runtime/debug"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
)

// client is the shell around one optim.Client: it builds the client itself,
// from the run's factory, and steps the current phase's behaviour. It is
// not an actor of its own: in one process a group actor hosts a block of
// clients, on a worker a remoteClient actor hosts one.
type client struct {
	id      int
	net     *graph.Network
	factory optim.ClientFactory
	watch   *watchdog

	c     optim.Client
	port  *optim.Port
	phase *optim.PhaseSpec
	beh   optim.Behaviour
}

// group is the actor shell around a contiguous block of clients. A step is
// one message per group and its acknowledgement one groupAck, instead of
// one of each per client: with one actor per client the mailbox hand-offs
// (2n per round) were most of the runtime's overhead over the sequential
// driver. The group steps its clients one after the other, each call
// bracketed by the watchdog under the client's own index, so a hung or
// failing call still names its client.
type group struct {
	clients    []client // clients first, first+1, … of the run
	supervisor *actor.PID
	watch      *watchdog
	last       *groupAck // the latest answer, reused once the supervisor has read it
}

func (g *group) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		for k := range g.clients {
			c := &g.clients[k]
			ctx.Send(g.supervisor, &built{client: c.id, err: c.build()})
		}
	case *step:
		// The supervisor reads an answer before it sends the next step of
		// the phase, so the last one is free again; it may not be (a late
		// answer to a failed phase, still unread), and then a fresh one is
		// made.
		a := g.last
		if a == nil || !a.read.Load() {
			a = &groupAck{acks: make([]ack, len(g.clients))}
			g.last = a
		}
		a.epoch = m.epoch
		a.read.Store(false)
		// Every client closes its round, then every client opens the next:
		// the sequential driver's order, and kinder to the caches than
		// alternating receiving and sending client by client. Each call is
		// watched under its client's index.
		prev := -1
		for k := range g.clients {
			c := &g.clients[k]
			g.watch.pass(prev, c.id)
			c.closeRound(&a.acks[k], m, m.in[c.id])
			prev = c.id
		}
		for k := range g.clients {
			if c := &g.clients[k]; a.acks[k].err == nil {
				g.watch.pass(prev, c.id)
				c.openRound(&a.acks[k], m)
				prev = c.id
			}
		}
		g.watch.pass(prev, -1)
		ctx.Send(g.supervisor, a)
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
func (c *client) step(m *step, in []optim.Message) *ack {
	a := &ack{}
	c.closeRound(a, m, in)
	if a.err == nil {
		c.openRound(a, m)
	}
	return a
}

// closeRound is the first half of a step: enter the phase (step 0), close
// round m.step-1 and evaluate if asked. It starts the acknowledgement a.
func (c *client) closeRound(a *ack, m *step, in []optim.Message) {
	*a = ack{client: c.id, epoch: m.epoch, step: m.step, round: -1}
	defer c.recover(a)
	if m.step > 0 {
		a.round = c.phase.Offset + m.step - 1
	}
	if m.step == 0 {
		c.phase = m.spec
		beh, err := c.c.Enter(m.spec)
		if err != nil {
			a.err = err
			return
		}
		c.beh = beh
	}
	if m.step > 0 && c.beh != nil {
		// An offline client does not run; it is evaluated all the same.
		if !c.port.Round().Offline {
			if err := c.beh.Receive(c.port.Round(), in); err != nil {
				a.err = err
				return
			}
		}
		if m.eval {
			if o, ok := c.beh.(optim.Observer); ok {
				a.stats = o.Observe()
			}
		}
	}
}

// openRound is the second half of a step, after closeRound succeeded: open
// round m.step and send (m.step < rounds), or collect the phase result.
func (c *client) openRound(a *ack, m *step) {
	defer c.recover(a)
	rounds := c.phase.Rounds
	if m.step < rounds {
		a.round = c.phase.Offset + m.step
		round := c.port.Open(c.phase.Name, a.round, m.tick)
		if c.beh != nil && !round.Offline {
			if err := c.beh.Send(round, c.port); err != nil {
				a.err = err
				return
			}
		}
		a.port = c.port
	}
	if m.step == rounds {
		if r, ok := c.beh.(optim.Resulter); ok {
			a.result = r.Result()
		}
	}
}

// recover turns a panic of a step's half into its error.
func (c *client) recover(a *ack) {
	if r := recover(); r != nil {
		a.err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
	}
}
