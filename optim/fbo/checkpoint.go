package fbo

import (
	"fmt"
	"slices"

	"hgpsim/optim"
)

// Checkpoints. A phase holds whole outer iterations, and every iteration
// starts with a round in which the server draws S and sends x (and y) to
// the clients of S, which take part only if they got it (Enter resets
// client.active). So the server's global model, its aggregates (q and
// z are kept when no upload arrives) and its sampling stream outlive a
// phase, and S, though redrawn in the first round, is saved with them; a
// client's iterates, gradients and minibatch indices are set anew in every
// iteration it takes part in, and only its minibatch positions (and, for
// clarity, its x and y) are saved. Send buffers and accumulators are
// scratch: no message outlives its phase.

// programState is what program carries between phases.
type programState struct {
	Done int
	RNG  []byte // the scheduling stream (Q, T')
}

// SaveState implements Stateful.
func (p *program) SaveState() ([]byte, error) {
	r, err := p.r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(programState{Done: p.done, RNG: r})
}

// LoadState implements Stateful.
func (p *program) LoadState(b []byte) error {
	var st programState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	if k := p.m.params().OuterSteps; st.Done < 0 || st.Done > k {
		return fmt.Errorf("%s: a saved state after %d outer iterations for a run of %d", p.name, st.Done, k)
	}
	if err := p.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%s: scheduling stream: %w", p.name, err)
	}
	p.done = st.Done
	return nil
}

// serverState is what server carries between phases. An aggregate
// not computed yet is nil.
type serverState struct {
	X, Y          []float64
	Q, Z, H       []float64
	Pcur, Psum    []float64
	RNG           []byte // the sampling stream
	Chosen        []int  // the last S
	Method, Lower string // checked on load
}

// SaveState implements Stateful.
func (s *server) SaveState() ([]byte, error) {
	r, err := s.r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(serverState{X: s.x, Y: s.y, Q: s.q, Z: s.z, H: s.h, Pcur: s.pcur, Psum: s.psum,
		RNG: r, Chosen: s.chosen, Method: fmt.Sprintf("%T", s.method), Lower: s.p.Lower})
}

// LoadState implements Stateful.
func (s *server) LoadState(b []byte) error {
	var st serverState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	if m := fmt.Sprintf("%T", s.method); st.Method != m || st.Lower != s.p.Lower {
		return fmt.Errorf("server: a saved state of %s (lower %q) for %s (lower %q)", st.Method, st.Lower, m, s.p.Lower)
	}
	dx, dy := len(s.x), len(s.y)
	if err := optim.CheckLens("server", map[string][2]int{
		"x": {len(st.X), dx}, "y": {len(st.Y), dy},
		"q": {len(st.Q), dy}, "z": {len(st.Z), dy}, "h": {len(st.H), dx},
		"p": {len(st.Pcur), dy}, "Σp": {len(st.Psum), dy},
	}, map[string]bool{"q": st.Q == nil, "z": st.Z == nil, "h": st.H == nil, "p": st.Pcur == nil, "Σp": st.Psum == nil}); err != nil {
		return err
	}
	if err := optim.CheckSample("server", st.Chosen, s.m, s.sample); err != nil {
		return err
	}
	if err := s.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("server: sampling stream: %w", err)
	}
	copy(s.x, st.X)
	copy(s.y, st.Y)
	s.q, s.z, s.h, s.pcur, s.psum = st.Q, st.Z, st.H, st.Pcur, st.Psum
	s.chosen = st.Chosen
	s.stages = nil
	return nil
}

// clientState is what an client carries between phases.
type clientState struct {
	ID         int
	X, Y       []float64
	Train, Val optim.BatcherState // minibatch positions on G_i's and F_i's data
	Mask       []byte             // the dropout key stream (nil: no dropout)
}

// SaveState implements Stateful.
func (c *client) SaveState() ([]byte, error) {
	g, err := c.gb.Save()
	if err != nil {
		return nil, err
	}
	f, err := c.fb.Save()
	if err != nil {
		return nil, err
	}
	var mask []byte
	if c.drop != nil {
		if mask, err = c.drop.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	return optim.EncodeState(clientState{ID: c.id, X: c.x, Y: c.y, Train: g, Val: f, Mask: mask})
}

// LoadState implements Stateful.
func (c *client) LoadState(b []byte) error {
	var st clientState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	who := fmt.Sprintf("client %d", c.id)
	if st.ID != c.id {
		return fmt.Errorf("%s: a saved state of client %d", who, st.ID)
	}
	if err := optim.CheckLens(who, map[string][2]int{"x": {len(st.X), len(c.x)}, "y": {len(st.Y), len(c.y)}}, nil); err != nil {
		return err
	}
	if (st.Mask != nil) != (c.drop != nil) {
		return fmt.Errorf("%s: a saved state with and a model without dropout, or the reverse", who)
	}
	for _, p := range []struct {
		name string
		st   optim.BatcherState
	}{{"training", st.Train}, {"validation", st.Val}} {
		if !optim.IsPerm(p.st.Perm) {
			return fmt.Errorf("%s: the saved %s minibatch order is not a permutation", who, p.name)
		}
	}
	prev, err := c.gb.Save()
	if err != nil {
		return err
	}
	prev.Perm = slices.Clone(prev.Perm) // load copies into the same slice
	if err := c.gb.Load(st.Train); err != nil {
		return fmt.Errorf("%s: training minibatches: %w", who, err)
	}
	if err := c.fb.Load(st.Val); err != nil {
		_ = c.gb.Load(prev) // leave the client as it was
		return fmt.Errorf("%s: validation minibatches: %w", who, err)
	}
	if c.drop != nil {
		if err := c.drop.UnmarshalBinary(st.Mask); err != nil {
			_ = c.gb.Load(prev)
			return fmt.Errorf("%s: dropout stream: %w", who, err)
		}
	}
	copy(c.x, st.X)
	copy(c.y, st.Y)
	c.stages, c.active, c.have = nil, -1, false
	return nil
}
