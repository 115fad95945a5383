package faults

import (
	"fmt"
	"math"

	"hgpsim/optim"
)

func init() {
	Faults.Register("byzantine",
		"A client whose model messages to the others are corrupted: the model part of what it sends (payload kind model, e.g. push-sum's z but never its mass ω) is multiplied by scale (-1 flips it). What it sends to itself, and its own state, are left intact.",
		func() Fault { return &Byzantine{Scale: -1} })
}

// Byzantine scales the model vectors a client sends to others.
type Byzantine struct {
	Scale float64 `yaml:"scale" doc:"factor applied to the model part of outgoing messages, finite (-1 flips it, 0 zeroes it)"`
}

// Validate implements Fault.
func (b *Byzantine) Validate() error {
	if math.IsNaN(b.Scale) || math.IsInf(b.Scale, 0) {
		return fmt.Errorf("scale must be finite, got %v", b.Scale)
	}
	return nil
}

// Wrap implements Fault.
func (b *Byzantine) Wrap(inner optim.Behaviour, env optim.Env) optim.Behaviour {
	if inner == nil {
		return nil
	}
	return &byzantine{Wrapped: optim.Wrapped{Inner: inner}, out: corrupting{self: env.Self, scale: b.Scale}}
}

type byzantine struct {
	optim.Wrapped
	out corrupting
}

func (b *byzantine) Send(r *optim.Round, out optim.Outbox) error {
	// A new round: the inner behaviour may refill a buffer it sent two
	// rounds ago, so no earlier copy is reused.
	b.out.Outbox, b.out.src = out, nil
	return b.Inner.Send(r, &b.out)
}

func (b *byzantine) Receive(r *optim.Round, in []optim.Message) error { return b.Inner.Receive(r, in) }

// corrupting posts the intact payload to the client itself and a scaled
// copy of its model part to everyone else. A copy is made once per sent
// vector (not per receiver) into one of two buffers used in turn, since a
// payload must stay valid until the sender's next-but-one round.
type corrupting struct {
	optim.Outbox
	self  int
	scale float64
	bufs  [2][]float64
	flip  int
	src   []float64 // the vector bufs[flip] is the corrupted copy of, this round
}

func (c *corrupting) Post(to int, weight float64, pushed bool, p optim.Payload) {
	if to != c.self && p.Kind == optim.KindModel && len(p.Vec) > 0 {
		if len(c.src) != len(p.Vec) || &c.src[0] != &p.Vec[0] {
			c.flip ^= 1
			buf := append(c.bufs[c.flip][:0], p.Vec...)
			for k := range buf {
				buf[k] *= c.scale
			}
			c.bufs[c.flip], c.src = buf, p.Vec
		}
		p.Vec = c.bufs[c.flip]
	}
	c.Outbox.Post(to, weight, pushed, p)
}
