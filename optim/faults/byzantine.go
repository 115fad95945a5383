package faults

import (
	"fmt"
	"math"

	"hgpsim/internal/vec"
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
	b.out.Outbox, b.out.f64.src, b.out.f32.src = out, nil, nil
	return b.Inner.Send(r, &b.out)
}

func (b *byzantine) Receive(r *optim.Round, in []optim.Message) error { return b.Inner.Receive(r, in) }

// corrupting posts the intact payload to the client itself and a scaled
// copy of its model part to everyone else, in whichever precision the
// payload's vector is. A copy is made once per sent vector (not per
// receiver) into one of two buffers used in turn, since a payload must
// stay valid until the sender's next-but-one round.
type corrupting struct {
	optim.Outbox
	self  int
	scale float64
	f64   corruptCopies[float64]
	f32   corruptCopies[float32]
}

func (c *corrupting) Post(to int, weight float64, pushed bool, p optim.Payload) {
	if to != c.self && p.Kind == optim.KindModel {
		p.Vec = c.f64.of(p.Vec, c.scale)
		p.Vec32 = c.f32.of(p.Vec32, c.scale)
	}
	c.Outbox.Post(to, weight, pushed, p)
}

// corruptCopies are the double-buffered scaled copies of one precision.
type corruptCopies[F vec.Float] struct {
	bufs [2][]F
	flip int
	src  []F // the vector bufs[flip] is the corrupted copy of, this round
}

// of returns v scaled (each element times F(scale), rounded to F), copied
// once per round and vector; an empty v is returned as it is.
func (c *corruptCopies[F]) of(v []F, scale float64) []F {
	if len(v) == 0 {
		return v
	}
	if len(c.src) != len(v) || &c.src[0] != &v[0] {
		c.flip ^= 1
		buf := append(c.bufs[c.flip][:0], v...)
		for k := range buf {
			buf[k] *= F(scale)
		}
		c.bufs[c.flip], c.src = buf, v
	}
	return c.bufs[c.flip]
}
