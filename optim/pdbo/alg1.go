package pdbo

import (
	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
)

// Alg1 is the schedule of a PDBO run, the PDBO paper's Alg. 1: for
// s = 0 … S, an SGP phase with λ⁽ˢ⁾ (evaluated), then — unless s = S — a
// hyper-gradient phase and every client's λ-update ("outer", one round
// without messages). With S = 0 and an estimator it takes one
// hyper-gradient estimate and applies nothing; without an estimator it is
// a plain SGP run.
type Alg1 struct {
	Steps       int  // S
	SGPRounds   int  // T
	SGPEval     int  // evaluate SGP every SGPEval rounds (0: only the last)
	Hyper       bool // a hyper-gradient estimator is configured
	HyperRounds int  // rounds of the hyper-gradient phase
	HyperEval   int  // report the estimates every HyperEval rounds (0: only the last)
	Warm        bool // start each SGP phase from the last iterate instead of the initial parameters
	// Patience stops the outer loop early when the validation accuracy has
	// not improved for this many outer steps (0: never).
	Patience int
	// Track asks the driver to record deliveries during the first SGP
	// phase, for the p̄/δ̄ estimation error.
	Track bool
	// ReportState makes every SGP phase end with each client's state
	// (z, ω, λ) in its Result, for a dense oracle.
	ReportState bool
	// Config is what the run's clients share, for those who rebuild their
	// linearizations (an oracle); the schedule itself does not read it.
	Config *Config

	step, stage int
	best        float64
	bestStep    int
	// Stopped is set when Patience ended the loop before step S.
	Stopped bool
}

const (
	stageSGP = iota
	stageHyper
	stageOuter
)

// Next implements optim.Program.
func (a *Alg1) Next(done *optim.PhaseReport) (*optim.PhaseSpec, error) {
	if done == nil {
		a.step, a.stage, a.best, a.bestStep = 0, stageSGP, -1, 0
		return a.sgpPart(nil), nil
	}
	switch done.Spec.Name {
	case "sgp":
		if done.Spec.Continued {
			return a.sgpPart(done), nil
		}
		val := done.SummarizeLast().ValAcc
		if val > a.best {
			a.best, a.bestStep = val, a.step
		}
		if !a.Hyper || (a.step == a.Steps && a.Steps > 0) {
			return a.nextStep(), nil
		}
		if a.Patience > 0 && a.step-a.bestStep >= a.Patience {
			a.Stopped = true
			return nil, nil
		}
		return &optim.PhaseSpec{Name: "hypergradient", Rounds: a.HyperRounds, EvalEvery: a.HyperEval, Step: a.step, Tick: optim.Continue}, nil
	case "hypergradient":
		if a.Steps == 0 {
			return nil, nil // a single estimate, reported but not applied
		}
		return &optim.PhaseSpec{Name: "outer", Rounds: 1, Step: a.step, Tick: optim.Continue}, nil
	case "outer":
		return a.nextStep(), nil
	}
	return nil, nil
}

// Horizon implements optim.Horizon: Next's schedule without Patience.
func (a *Alg1) Horizon() uint64 {
	var ticks uint64
	for s := 0; s <= a.Steps; s++ {
		ticks += uint64(a.SGPRounds)
		if !a.Hyper || (s == a.Steps && a.Steps > 0) {
			continue
		}
		ticks += uint64(a.HyperRounds)
		if a.Steps == 0 {
			break
		}
		ticks++ // the outer phase's round
	}
	return ticks
}

func (a *Alg1) nextStep() *optim.PhaseSpec {
	if a.step >= a.Steps {
		return nil
	}
	a.step++
	return a.sgpPart(nil)
}

func (a *Alg1) sgp() *optim.PhaseSpec {
	p := &optim.PhaseSpec{Name: "sgp", Rounds: a.SGPRounds, EvalEvery: a.SGPEval, Step: a.step, Tick: optim.Continue,
		Track: a.Track && a.step == 0}
	optim.PutArgs(p, SGPArgs{Warm: a.Warm && a.step > 0, ReportState: a.ReportState})
	return p
}

// alg1State is what Alg1 carries from one outer step to the next.
type alg1State struct {
	Step, Stage, BestStep int
	Best                  float64
	Stopped               bool
}

// SaveState implements optim.Stateful.
func (a *Alg1) SaveState() ([]byte, error) {
	return optim.EncodeState(alg1State{Step: a.step, Stage: a.stage, BestStep: a.bestStep, Best: a.best, Stopped: a.Stopped})
}

// LoadState implements optim.Stateful.
func (a *Alg1) LoadState(b []byte) error {
	var s alg1State
	if err := optim.DecodeState(b, &s); err != nil {
		return err
	}
	a.step, a.stage, a.bestStep, a.best, a.Stopped = s.Step, s.Stage, s.BestStep, s.Best, s.Stopped
	return nil
}

// Linearizations rebuilds every client's linearization from the state its
// SGP phase reported (Alg1.ReportState), with the exact p̄ (pTrue, from
// nw.ExpectedPushWeights) and δ̄ of nw: the input of FixedPointOracle.
func Linearizations(cfg *Config, nw *graph.Network, pTrue [][]float64, model models.Bilevel[float64], data []datasets.ClientData, results []optim.Result) ([]Linearization[float64], error) {
	states, err := optim.ResultsOf[SGPResult](results)
	if err != nil {
		return nil, err
	}
	lins := make([]Linearization[float64], len(states))
	for i, st := range states {
		delta := make([]float64, nw.N)
		for j := range delta {
			delta[j] = nw.Delta(j, i)
		}
		outer := data[i].Train
		if cfg.OuterVal {
			outer = data[i].Val
		}
		lins[i] = Linearization[float64]{ID: i, N: nw.N, Model: model.Clone(), Inner: data[i].Train, Outer: outer,
			Lambda: st.Lambda, Z: st.Z, Omega: st.Omega,
			PBar: pTrue[i], DeltaBar: delta, Variant: cfg.SGP.Variant, LR: cfg.HyperLR, Batch: cfg.HyperBatch, Seed: cfg.Seed}
	}
	return lins, nil
}

// StoppedEarly reports that Patience ended the loop before step S.
func (a *Alg1) StoppedEarly() bool { return a.Stopped }

// ReportsStates reports ReportState: every SGP phase ends with each
// client's state in its Result.
func (a *Alg1) ReportsStates() bool { return a.ReportState }

// HyperLR is the step of the linearized SGP map the hyper-gradient phase
// differentiates (App. B).
func (a *Alg1) HyperLR() float64 { return a.Config.HyperLR }

// Oracle returns every client's hyper-gradient by FixedPointOracle at the
// states the last SGP phase reported, with the exact p̄ (pTrue) and δ̄ of
// nw.
func (a *Alg1) Oracle(nw *graph.Network, pTrue [][]float64, model models.Bilevel[float64], data []datasets.ClientData, states []optim.Result) ([][]float64, error) {
	lins, err := Linearizations(a.Config, nw, pTrue, model, data, states)
	if err != nil {
		return nil, err
	}
	return FixedPointOracle(lins)
}
