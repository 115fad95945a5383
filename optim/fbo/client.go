package fbo

import (
	"fmt"
	"slices"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// client is client i: it computes what each round asks on its data.
type client struct {
	id     int
	method scheme
	p      *Params
	model  models.Bilevel[float64]
	train  *datasets.Dataset // G_i
	val    *datasets.Dataset // F_i
	gb, fb *optim.Batcher    // minibatches of G_i and F_i
	stages *schedule

	x, y       []float64 // the iteration's outer point and current inner point
	xv, yv     []float64 // local iterates
	in         []float64 // the down message's payload (after x)
	active     int       // outer iteration this client takes part in (-1: none)
	have       bool      // got this round's down message
	gy, gy0    []float64 // gradients in y
	gx, gx0    []float64 // gradients in x
	hv, tmp    []float64
	tmpY, tmpX []float64 // scratch of OuterGrad's unwanted part
	local      []float64 // LFedNest's local p
	out        optim.SendBuffers
	idxA       []int
	sameBatch  bool        // One-Round-Upper's correction on the sample of the step (FedNest) or a fresh one (FBO-AggITD)
	ctr        []float64   // released Neumann: the client's own term c_i
	ctrIter    int         // and the outer iteration (in the phase) and
	ctrStep    int         // Neumann round of its last update
	drop       *rng.Stream // dropout mask keys (nil: the model has no dropout)
}

func newClient(i int, m scheme, s *optim.Setup, x0 []float64) *client {
	dy, dx := s.Model.DimX(), s.Model.DimLambda()
	pp := m.params()
	_, same := m.(*FedNest)
	_, lf := m.(*LFedNest)
	c := &client{id: i, method: m, p: pp, model: s.Model.Clone(), train: s.Data[i].Train, val: s.Data[i].Val,
		gb: optim.NewBatcher(s.Data[i].Train.N, pp.Batch, rng.NewStream(s.Seed, i, rng.PurposeBatch)),
		fb: optim.NewBatcher(s.Data[i].Val.N, pp.Batch, rng.NewStream(s.Seed, i, rng.PurposeHyper)),
		x:  slices.Clone(x0), y: make([]float64, dy), xv: make([]float64, dx), yv: make([]float64, dy),
		gy: make([]float64, dy), gy0: make([]float64, dy), gx: make([]float64, dx), gx0: make([]float64, dx),
		hv: make([]float64, dy), tmp: make([]float64, dy), tmpY: make([]float64, dy), active: -1, sameBatch: same || lf}
	if d, ok := c.model.(models.Dropout); ok && d.DropoutRate() > 0 {
		c.drop = rng.NewStream(s.Seed, i, rng.PurposeCoin)
	}
	return c
}

// fresh gives the next product a new dropout mask, as a new forward pass in
// training mode does (no-op without dropout).
func (c *client) fresh() {
	if c.drop != nil {
		c.model.(models.Dropout).SetMask(c.drop.Uint64(), true)
	}
}

// Enter implements Client.
func (c *client) Enter(spec *optim.PhaseSpec) (optim.Behaviour, error) {
	st, err := phaseSchedule(c.method, spec)
	if err != nil {
		return nil, err
	}
	c.stages = st
	c.active = -1
	c.ctrIter = -1
	return c, nil
}

// Receive implements Behaviour: the down half of a round.
func (c *client) Receive(r *optim.Round, in []optim.Message) error {
	if !r.Down() {
		return nil
	}
	st := c.stages.at(r.Exchange())
	c.have = false
	for _, m := range in {
		// A server message delayed past its round belongs to another
		// stage (a vector of another meaning, maybe of another length):
		// stale, it counts as lost.
		if m.From != 0 || m.Round != r.Index {
			continue
		}
		v := m.Vec
		if st.first {
			if len(v) < len(c.x) {
				return fmt.Errorf("client %d: short message from the server (%d values)", c.id, len(v))
			}
			copy(c.x, v[:len(c.x)])
			v = v[len(c.x):]
			c.active = st.iter
		}
		if c.active != st.iter {
			continue // missed the iteration's first message: sit it out
		}
		c.in = append(c.in[:0], v...)
		c.have = true
	}
	return nil
}

// batch returns a fresh minibatch of b (nil: full batch), copied so that a
// later draw cannot change it.
func batch(dst []int, b *optim.Batcher) []int {
	idx := b.Next()
	if idx == nil {
		return nil
	}
	return append(dst[:0], idx...)
}

// Send implements Behaviour: the up half, the client's computation.
func (c *client) Send(r *optim.Round, out optim.Outbox) error {
	if !r.Up() || !c.have {
		return nil
	}
	c.have = false
	st := c.stages.at(r.Exchange())
	first, second, kind := c.compute(st)
	up := c.out.Fill(first, second)
	if !optim.AllFinite(up) {
		return fmt.Errorf("%w: client %d's %s upload (lower beta, alpha or lambda)", optim.ErrNonFinite, c.id, stageName(st.kind))
	}
	optim.Send(out, []int{0}, optim.Payload{Kind: kind, Vec: up})
	return nil
}
