package pdbo

import (
	"fmt"
	"slices"

	"hgpsim/datasets"
	"hgpsim/internal/vec"
	"hgpsim/models"
	"hgpsim/optim"
)

// Config is what every client of a PDBO run shares (PDBO paper Alg. 1).
type Config struct {
	N   int // clients
	SGP SGPConfig
	// Estimator names the hyper-gradient estimator ("" for none); see
	// Estimators.
	Estimator string
	Alpha     float64 // vr-hgp
	Beta      float64 // vr-hgp
	// DampDirect makes VR-HGP start v at ⟨c^λ⟩_i and scale it by α with
	// the rest of v (hypergradient.direct: damped); see NewVRHGPDamped.
	DampDirect bool
	Sampling   Sampling
	HyperBatch int // minibatch of Â and B̂; 0 = full batch
	// HyperLR is the step of the linearized SGP map (App. B).
	HyperLR float64
	// OuterVal makes F_i the validation loss instead of the training loss.
	OuterVal bool
	// NewOptimizer returns a client's λ-optimizer (one per client).
	NewOptimizer func() OuterOptimizer
	// Warm says the program warm-starts SGP phases (Alg1.Warm), so a
	// checkpoint must keep each client's last iterate.
	Warm bool
	Seed uint64
}

// Client is one client of PDBO: its data and model, its
// hyperparameters λ_i, the SGP state it trains, the hyper-gradient
// estimator of the last linearization and its λ-optimizer. Phases:
//
//   - "sgp": T rounds of SGP (Eq. 4, Alg. 2) with the current λ_i, started
//     from the common initial parameters, or from the last x_i when the
//     phase's SGPArgs.Warm is set;
//   - "hypergradient": linearize the SGP map at the current state and run
//     the estimator (HGP, VR-HGP, exact backprop, local);
//   - "outer": λ_i ← optimizer step with the estimate (Alg. 1 line 7).
//
// F is the run's precision: the model, x⁰, the SGP state and the
// estimator's vectors are F; λ and its optimizer are float64.
type Client[F vec.Float] struct {
	id    int
	cfg   *Config
	model models.Bilevel[F]
	data  datasets.ClientData
	x0    []F // shared, read-only
	// trueP and trueDelta, when not nil, replace the counted p̄_i· and
	// δ̄_{·→i} in the linearization (estimates: true).
	trueP, trueDelta []float64

	lambda []float64
	opt    OuterOptimizer
	sgp    *SGP[F]
	est    HyperEstimator
	// warm is the iterate a resumed client starts its next warm SGP phase
	// from (the last x_i of the run it was saved in).
	warm []F
	// cut says the SGP part last entered is followed by another part of
	// the same phase: a checkpoint taken now saves the SGP state.
	cut bool
	// lost says the client restarted (Reinit) since its last SGP phase:
	// it has no estimate, and skips the λ-update.
	lost bool
}

// NewClient returns client id. model must be the client's own value
// (models.Bilevel.Clone); x0 is shared and never written.
func NewClient[F vec.Float](id int, cfg *Config, model models.Bilevel[F], data datasets.ClientData, x0 []F) *Client[F] {
	c := &Client[F]{id: id, cfg: cfg, model: model, data: data, x0: x0,
		lambda: make([]float64, model.DimLambda())} // λ⁽⁰⁾ = 0, as in the paper
	if cfg.NewOptimizer != nil {
		c.opt = cfg.NewOptimizer()
	}
	return c
}

// UseTrueEstimates makes the client linearize with the exact p̄_i· (its row
// of graph.Network.ExpectedPushWeights) and δ̄_{·→i} (its column of Prob)
// instead of its Alg. 2 counts.
func (c *Client[F]) UseTrueEstimates(pBar, deltaBar []float64) {
	c.trueP, c.trueDelta = pBar, deltaBar
}

func (c *Client[F]) outer() *datasets.Dataset {
	if c.cfg.OuterVal {
		return c.data.Val
	}
	return c.data.Train
}

// Enter implements optim.Client.
func (c *Client[F]) Enter(p *optim.PhaseSpec) (optim.Behaviour, error) {
	switch p.Name {
	case "sgp":
		args, err := optim.ArgsOf[SGPArgs](p)
		if err != nil {
			return nil, err
		}
		if p.Offset > 0 { // a later part of a cut phase continues the state
			if c.sgp == nil || c.sgp.shedZ {
				return nil, fmt.Errorf("SGP rounds from %d need the part of the phase before them", p.Offset)
			}
			c.cut = p.Continued
			return &pdboSGP[F]{SGP: c.sgp, c: c, estimates: p.Track, state: args.ReportState}, nil
		}
		c.cut, c.lost = p.Continued, false
		start := c.x0
		if args.Warm && c.sgp != nil {
			start = c.sgp.X()
		} else if args.Warm && c.warm != nil {
			start = c.warm
		}
		c.warm = nil
		c.newSGP(start)
		return &pdboSGP[F]{SGP: c.sgp, c: c, estimates: p.Track, state: args.ReportState}, nil
	case "hypergradient":
		if c.sgp == nil {
			return nil, fmt.Errorf("a hyper-gradient phase needs an SGP phase before it")
		}
		// The SGP runs no more rounds: the estimator shares its x, and
		// the client keeps x and ω of the SGP state (for a warm start),
		// unless a checkpoint may still save the whole state.
		c.est = nil // the last estimator's vectors go before the new ones come
		lin := c.sgp.linearizeShared(c.outer(), c.cfg.HyperLR, c.cfg.HyperBatch, c.cfg.Seed, !c.cut)
		if c.trueP != nil {
			lin.Links, lin.PBar, lin.DeltaBar = nil, c.trueP, slices.Clone(c.trueDelta)
		}
		e, err := NewEstimator(c.cfg.Estimator, lin, c.cfg)
		if err != nil {
			return nil, err
		}
		c.est = e
		return hyperPhase[F]{e}, nil
	case "outer":
		if c.est == nil && c.lost {
			return nil, nil
		}
		if c.est == nil || c.opt == nil {
			return nil, fmt.Errorf("an outer step needs a hyper-gradient estimate and an optimizer")
		}
		c.est = freeze(c.est)
		return &OuterStep{Lambda: c.lambda, Est: c.est, Opt: c.opt, Step: p.Step}, nil
	}
	return nil, fmt.Errorf("PDBO has no phase %q", p.Name)
}

func (c *Client[F]) newSGP(start []F) {
	c.sgp = NewSGPBilevel(c.id, c.cfg.N, c.model, c.lambda, c.data, start, c.cfg.SGP, c.cfg.Seed)
	if c.cfg.Estimator != "" {
		c.sgp.SetOuterData(c.outer())
	}
}

// pdboSGP reports λ_i (for the summary's ‖λ‖) at the end of the SGP phase
// and, when asked, the Alg. 2 estimates and the push-sum state.
type pdboSGP[F vec.Float] struct {
	*SGP[F]
	c                *Client[F]
	estimates, state bool
}

// Result implements optim.Resulter.
func (s *pdboSGP[F]) Result() optim.Result {
	r := SGPResult{Lambda: s.c.lambda}
	if s.estimates {
		r.PBar, r.DeltaBar = s.Estimates()
	}
	if s.state {
		// The dense oracle is the float64 reference: z widened, exactly.
		z, omega := s.State()
		r.Z, r.Omega = widen(z), omega
	}
	return optim.PutResult(r)
}

// hyperPhase reports the estimate at the end of the phase.
type hyperPhase[F vec.Float] struct{ HyperEstimator }

// Result implements optim.Resulter.
func (h hyperPhase[F]) Result() optim.Result {
	return optim.PutResult(HyperResult{Hypergradient: h.Estimate()})
}

// Observe implements optim.Observer.
func (h hyperPhase[F]) Observe() optim.Stats { return optim.Stats{Hyper: h.Estimate()} }

// Premix forwards to the estimator when it is a Premixer; otherwise it
// needs no mix and ReceiveMixed is the estimator's Receive.
func (h hyperPhase[F]) Premix(r *optim.Round, in []optim.Message) []optim.Mix[F] {
	if p, ok := h.HyperEstimator.(optim.Premixer[F]); ok {
		return p.Premix(r, in)
	}
	return nil
}

// ReceiveMixed implements optim.Premixer.
func (h hyperPhase[F]) ReceiveMixed(r *optim.Round, in []optim.Message) error {
	if p, ok := h.HyperEstimator.(optim.Premixer[F]); ok {
		return p.ReceiveMixed(r, in)
	}
	return h.HyperEstimator.Receive(r, in)
}

// NewEstimator builds a registered hyper-gradient estimator for lin.
func NewEstimator[F vec.Float](name string, lin Linearization[F], cfg *Config) (HyperEstimator, error) {
	e, err := Estimators.Lookup(name)
	if err != nil {
		return nil, err
	}
	switch l := any(lin).(type) {
	case Linearization[float32]:
		return e.New().New32(l, cfg), nil
	case Linearization[float64]:
		return e.New().New(l, cfg), nil
	}
	return nil, fmt.Errorf("pdbo: no estimator for %T", lin)
}

// pdboState is what a PDBO client carries from one outer step to the next:
// λ_i, its optimizer's memory and the last SGP iterate (for warm starts).
// The SGP state itself is rebuilt by each SGP phase, and the estimator by
// each hyper-gradient phase; only a checkpoint between two parts of a cut
// SGP phase saves it (SGP).
type pdboState[F vec.Float] struct {
	Lambda []float64
	Opt    []byte
	X      []F
	SGP    *SGPState[F]
}

// SaveState implements optim.Stateful.
func (c *Client[F]) SaveState() ([]byte, error) {
	st := pdboState[F]{Lambda: c.lambda}
	if c.cut && c.sgp != nil {
		sgp, err := c.sgp.Save()
		if err != nil {
			return nil, err
		}
		st.SGP = &sgp
	}
	if c.cfg.Warm { // with restarts the iterate is never read again
		st.X = c.warm
		if c.sgp != nil {
			st.X = c.sgp.X()
		}
	}
	if c.opt != nil {
		s, ok := c.opt.(optim.Stateful)
		if !ok {
			return nil, fmt.Errorf("the outer optimizer %T cannot save its state", c.opt)
		}
		b, err := s.SaveState()
		if err != nil {
			return nil, err
		}
		st.Opt = b
	}
	return optim.EncodeState(st)
}

// LoadState implements optim.Stateful.
func (c *Client[F]) LoadState(b []byte) error {
	var st pdboState[F]
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	if len(st.Lambda) != len(c.lambda) || (st.X != nil && len(st.X) != len(c.x0)) {
		return fmt.Errorf("pdbo: a saved state with |λ| = %d, |x| = %d for a client with |λ| = %d, |x| = %d",
			len(st.Lambda), len(st.X), len(c.lambda), len(c.x0))
	}
	copy(c.lambda, st.Lambda)
	c.warm, c.sgp, c.est, c.cut = st.X, nil, nil, false
	if st.SGP != nil {
		// Inside a cut SGP phase: its next part continues this state.
		c.newSGP(c.x0)
		if err := c.sgp.Load(*st.SGP); err != nil {
			c.sgp = nil
			return fmt.Errorf("pdbo: %w", err)
		}
	}
	if s, ok := c.opt.(optim.Stateful); ok {
		return s.LoadState(st.Opt)
	} else if c.opt != nil {
		return fmt.Errorf("the outer optimizer %T cannot load a saved state", c.opt)
	}
	return nil
}

// frozenEstimate is a finished estimator's estimate without its vectors,
// which the outer step and the phases after it do not read.
type frozenEstimate struct{ est []float64 }

func freeze(e HyperEstimator) HyperEstimator {
	if f, ok := e.(frozenEstimate); ok {
		return f
	}
	f := frozenEstimate{est: e.Estimate()}
	if r, ok := e.(interface{ release() }); ok {
		r.release()
	}
	return f
}

// Send implements optim.Behaviour: nothing travels.
func (frozenEstimate) Send(*optim.Round, optim.Outbox) error { return nil }

// Receive implements optim.Behaviour.
func (frozenEstimate) Receive(*optim.Round, []optim.Message) error { return nil }

// Estimate implements HyperEstimator.
func (f frozenEstimate) Estimate() []float64 { return slices.Clone(f.est) }
