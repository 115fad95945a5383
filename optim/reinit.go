package optim

import "hgpsim/internal/vec"

// Reinitializer is a client that can restart from its initial state, as a
// node that crashed and lost its memory does (graph's crash failure with
// state: reinit). What the initial state is belongs to the algorithm; a
// Fixed client is a Reinitializer when the behaviour it holds is one.
type Reinitializer interface {
	// Reinit restarts the client from its initial state at round r of
	// phase p, before the round's Send, and returns the behaviour that
	// runs the rest of the phase (nil: none).
	Reinit(p *PhaseSpec, r *Round) (Behaviour, error)
}

// ReinitializerOf returns c, or the behaviour a Fixed client holds, as a
// Reinitializer.
func ReinitializerOf(c Client) (Reinitializer, bool) {
	if r, ok := c.(Reinitializer); ok {
		return r, true
	}
	if h, ok := c.(holder); ok {
		r, ok := h.held().(Reinitializer)
		return r, ok
	}
	return nil, false
}

// Reinitializing returns c, whose Reinitializer is r, with every phase's
// behaviour watching for Round.Reinit: in such a round the client
// restarts (r.Reinit) and its new behaviour runs the round and the rest of
// the phase. Runs without state-losing crashes do not need it.
func Reinitializing(c Client, r Reinitializer) Client {
	return &reinitClient{Client: c, r: r}
}

type reinitClient struct {
	Client
	r Reinitializer
}

func (c *reinitClient) Enter(p *PhaseSpec) (Behaviour, error) {
	b, err := c.Client.Enter(p)
	if err != nil || b == nil {
		return b, err
	}
	if _, ok := b.(Premixer[float32]); ok {
		return &reinitBehaviour[float32]{Wrapped: Wrapped{Inner: b}, r: c.r, spec: p}, nil
	}
	return &reinitBehaviour[float64]{Wrapped: Wrapped{Inner: b}, r: c.r, spec: p}, nil
}

// reinitBehaviour forwards to the client's current behaviour, which a
// restart replaces (with one of the same precision). It is a Premixer[F]
// whatever the inner behaviour is — F float32 when the first one mixes in
// float32 — and a behaviour that is none gets no mixes and its Receive,
// as drivers do.
type reinitBehaviour[F vec.Float] struct {
	Wrapped
	r    Reinitializer
	spec *PhaseSpec
}

func (b *reinitBehaviour[F]) Send(r *Round, out Outbox) error {
	if r.Reinit {
		nb, err := b.r.Reinit(b.spec, r)
		if err != nil {
			return err
		}
		b.Inner = nb
	}
	if b.Inner == nil {
		return nil
	}
	return b.Inner.Send(r, out)
}

func (b *reinitBehaviour[F]) Receive(r *Round, in []Message) error {
	if b.Inner == nil {
		return nil
	}
	return b.Inner.Receive(r, in)
}

// Premix implements Premixer.
func (b *reinitBehaviour[F]) Premix(r *Round, in []Message) []Mix[F] {
	if p, ok := b.Inner.(Premixer[F]); ok {
		return p.Premix(r, in)
	}
	return nil
}

// ReceiveMixed implements Premixer.
func (b *reinitBehaviour[F]) ReceiveMixed(r *Round, in []Message) error {
	if p, ok := b.Inner.(Premixer[F]); ok {
		return p.ReceiveMixed(r, in)
	}
	return b.Receive(r, in)
}
