package pdbo

import (
	"hgpsim/internal/vec"
	"hgpsim/optim"
)

// SGPState is an SGP client's state between two rounds of a phase: what
// a client saves when a checkpoint cuts its SGP phase (Alg1 cuts the SGP
// phase of a run without an outer loop at its evaluations).
type SGPState[F vec.Float] struct {
	PushSum optim.PushSumState[F]
	Batch   optim.BatcherState
}

// Save returns the state, sharing the client's slices (encode it before
// the next round).
func (s *SGP[F]) Save() (SGPState[F], error) {
	b, err := s.batch.Save()
	return SGPState[F]{PushSum: s.ps.Save(), Batch: b}, err
}

// Load restores a state Save returned, for an SGP client built alike.
func (s *SGP[F]) Load(st SGPState[F]) error {
	if err := s.ps.Load(st.PushSum); err != nil {
		return err
	}
	return s.batch.Load(st.Batch)
}

// maxSGPParts bounds the parts of a cut SGP phase: each checkpoint syncs
// files (tens of milliseconds on a disk), which at every evaluation of a
// fast phase would cost more than the rounds; a twentieth of the phase is
// what a kill may cost at most.
const maxSGPParts = 20

// sgpPart returns the SGP phase of the current step, cut at evaluations
// when the run has no outer loop (no other boundary to checkpoint at) into
// at most maxSGPParts parts of whole evaluation periods: its first part,
// or with done, the part after done. A part continues the delivery record
// of the parts before it, so the cut phase reports what the whole phase
// would.
func (a *Alg1) sgpPart(done *optim.PhaseReport) *optim.PhaseSpec {
	p := a.sgp()
	if a.Steps > 0 {
		return p
	}
	parts := optim.SplitPhase(*p, (p.Rounds+maxSGPParts-1)/maxSGPParts)
	if done == nil {
		return &parts[0]
	}
	for k := range parts {
		if parts[k].Offset == done.Spec.Offset+done.Spec.Rounds {
			next := parts[k]
			next.Delivered = done.Delivered
			return &next
		}
	}
	return nil // cannot happen: done was a part of this phase with Continued
}

// Reinit implements optim.Reinitializer: the client forgets everything it
// learned, as at the start of the run — x = z = x⁰, ω = 1, its Alg. 2
// counts and minibatch stream from their start, λ = 0 and a fresh outer
// optimizer. In an SGP phase it runs the rest of the phase from there; in
// a hyper-gradient phase or a λ-update it has no linearization of its own,
// so it sits out the rest of the phase and the λ-update that follows, and
// rejoins at the next SGP phase.
func (c *Client[F]) Reinit(p *optim.PhaseSpec, _ *optim.Round) (optim.Behaviour, error) {
	clear(c.lambda)
	if c.cfg.NewOptimizer != nil {
		c.opt = c.cfg.NewOptimizer()
	}
	c.warm, c.est = nil, nil
	c.newSGP(c.x0)
	if p.Name != "sgp" {
		c.lost = true
		return nil, nil
	}
	args, err := optim.ArgsOf[SGPArgs](p)
	if err != nil {
		return nil, err
	}
	c.cut = p.Continued
	return &pdboSGP[F]{SGP: c.sgp, c: c, estimates: p.Track, state: args.ReportState}, nil
}
