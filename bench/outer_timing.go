package bench

import (
	"time"

	"hgpsim/optim"
)

// How Outer times one outer step: a program cut after the first λ-update,
// clients wrapped to clock their phases and a sink that reads the clocks.

// firstStep runs a program until its first λ-update ("outer" phase) has
// finished: one outer step.
type firstStep struct{ prog optim.Program }

// Next implements optim.Program.
func (f *firstStep) Next(done *optim.PhaseReport) (*optim.PhaseSpec, error) {
	if done != nil && done.Spec.Name == "outer" {
		return nil, nil
	}
	return f.prog.Next(done)
}

// clientClock is what a timedClient records during the current phase.
// The client writes it from wherever the driver runs it; the sink reads it
// in Finished, after every client has answered the phase's last step.
type clientClock struct {
	enter, observe time.Duration
	recvEnd        []time.Time // by round: when Receive returned
}

// timedClient times a client's Enter and wraps its behaviours in
// timedBehaviour.
type timedClient struct {
	optim.Client
	clk *clientClock
}

// Enter implements optim.Client.
func (c *timedClient) Enter(p *optim.PhaseSpec) (optim.Behaviour, error) {
	clk := c.clk
	clk.observe = 0
	if cap(clk.recvEnd) < p.Rounds {
		clk.recvEnd = make([]time.Time, p.Rounds)
	}
	clk.recvEnd = clk.recvEnd[:p.Rounds]
	clear(clk.recvEnd)
	start := time.Now()
	b, err := c.Client.Enter(p)
	clk.enter = time.Since(start)
	if err != nil || b == nil {
		return b, err
	}
	return &timedBehaviour{Wrapped: optim.Wrapped{Inner: b}, clk: clk}, nil
}

// timedBehaviour records when each Receive returns and times Observe; it
// forwards everything to the behaviour it wraps (a behaviour that is no
// Observer or Resulter reports zero values, as drivers do for those).
type timedBehaviour struct {
	optim.Wrapped
	clk *clientClock
}

// Send implements optim.Behaviour.
func (b *timedBehaviour) Send(r *optim.Round, out optim.Outbox) error { return b.Inner.Send(r, out) }

// Receive implements optim.Behaviour.
func (b *timedBehaviour) Receive(r *optim.Round, in []optim.Message) error {
	err := b.Inner.Receive(r, in)
	b.clk.recvEnd[r.Index] = time.Now()
	return err
}

// Observe implements optim.Observer.
func (b *timedBehaviour) Observe() optim.Stats {
	start := time.Now()
	s := b.Wrapped.Observe()
	b.clk.observe += time.Since(start)
	return s
}

// timingSink is the optim.Sink of Outer.Measure: it notes when the last
// round's evaluation arrives and, when a phase ends, derives the phase's
// PhaseTime from the clients' clocks.
type timingSink struct {
	clocks    []*clientClock
	mark      time.Time // end of the previous phase (or start of Execute)
	evaluated time.Time // the last Evaluated of the current phase
	phases    []PhaseTime
}

// Evaluated implements optim.Sink.
func (s *timingSink) Evaluated(*optim.RoundEvent) error {
	s.evaluated = time.Now()
	return nil
}

// Finished implements optim.Sink.
func (s *timingSink) Finished(rep *optim.PhaseReport) error {
	now := time.Now()
	rounds := rep.Spec.Rounds
	p := PhaseTime{Name: rep.Spec.Name, Rounds: rounds, Wall: now.Sub(s.mark)}
	for _, c := range s.clocks {
		p.EnterClient += c.enter
		p.ObserveClient += c.observe
	}
	last := func(r int) time.Time { // E_r
		var t time.Time
		for _, c := range s.clocks {
			if c.recvEnd[r].After(t) {
				t = c.recvEnd[r]
			}
		}
		return t
	}
	switch {
	case rounds >= 3 && !last(0).IsZero():
		e0, e2 := last(0), last(rounds-2)
		p.PerRound = e2.Sub(e0) / time.Duration(rounds-2)
		p.Enter = max(0, e0.Sub(s.mark)-p.PerRound)
		if s.evaluated.After(e2) {
			p.Eval = max(0, s.evaluated.Sub(e2)-p.PerRound)
		}
	case rounds > 0:
		p.Enter, p.Eval = p.EnterClient, p.ObserveClient
		p.PerRound = max(0, p.Wall-p.Enter-p.Eval) / time.Duration(rounds)
	default:
		p.Enter = p.Wall
	}
	s.phases = append(s.phases, p)
	s.mark, s.evaluated = now, time.Time{}
	return nil
}
