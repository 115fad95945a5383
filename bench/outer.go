package bench

import (
	"context"
	"fmt"
	"time"

	"hgpsim/optim"
	"hgpsim/optim/pdbo"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// DefaultScenario is the scenario file whose outer step WriteOuter
// measures by default, relative to the repository root: PDBO
// personalization on Fashion-MNIST over a stochastic-directed network.
const DefaultScenario = "scenarios/paper/personalization-stod.yaml"

// LoadScenario loads the scenario file of an outer-step measurement. When
// the files of its data source are missing (Fashion-MNIST is not
// installed), the synthetic data of scenarios.Default() (20 features, 5
// classes, 150 training examples per client) stand in for them and note
// says so; note is empty otherwise.
func LoadScenario(path string) (sc scenarios.Scenario, note string, err error) {
	sc, err = scenarios.Load(path)
	if err != nil {
		return sc, "", err
	}
	if m, ok := sc.Data.Source.Params.(interface{ Missing() []string }); ok {
		if missing := m.Missing(); len(missing) > 0 {
			note = fmt.Sprintf("%s is not installed (%s missing), so the synthetic data of scenarios.Default() "+
				"(20 features, 5 classes, 150 training examples per client) stand in for it.", sc.Data.Source.Name, missing[0])
			sc.Data = scenarios.Default().Data
		}
	}
	return sc, note, nil
}

// Outer is one PDBO outer step of a scenario set up for measurement: the
// run built with run.Build and its real program (run.Run.Program, Alg. 1)
// with the SGP and hyper-gradient rounds capped; the rest is extrapolated
// per round.
type Outer struct {
	Method  string
	Run     *run.Run
	T, M    int // the scenario's SGP rounds and hyper-gradient rounds
	TM, MM  int // the rounds measured: min(T, cap), min(M, cap)
	Steps   int // the scenario's outer steps S
	SGPEval int // the scenario's SGP eval_every, for the extrapolation
	HypEval int // the scenario's hypergradient eval_every
	// Build is the time run.Build took (data, partition, network).
	Build time.Duration
}

// NewOuter builds sc for method (a pdbo-* method, i.e. one with a
// hyper-gradient estimator) at n clients, measured with at most capRounds
// SGP and hyper-gradient rounds.
func NewOuter(sc scenarios.Scenario, method string, n, capRounds int) (*Outer, error) {
	sc.Method = method
	sc.Clients = n
	sc.Hypergradient.Oracle = false // the dense oracle is a check, not part of a step
	start := time.Now()
	r, err := run.Build(sc)
	if err != nil {
		return nil, err
	}
	build := time.Since(start)
	prog, _ := r.Program().(*pdbo.Alg1)
	if prog == nil || !prog.Hyper {
		return nil, fmt.Errorf("bench: method %s has no hyper-gradient estimator, so no outer step", method)
	}
	o := &Outer{Method: method, Run: r, T: prog.SGPRounds, M: prog.HyperRounds, Steps: prog.Steps,
		SGPEval: prog.SGPEval, HypEval: prog.HyperEval, Build: build}
	o.TM, o.MM = min(o.T, capRounds), min(o.M, capRounds)
	return o, nil
}

// PhaseTime is the timing of one phase of the measured step. Wall comes
// from the timing sink (from the end of the previous phase, or the start
// of Execute, to the phase's report). The other parts are derived from
// wall-clock instants the same way for both drivers: E_r, the moment the
// last client finished receiving round r (recorded by a wrapper around
// every behaviour), and the moment the sink got the evaluation of the last
// round.
type PhaseTime struct {
	Name   string
	Rounds int
	Wall   time.Duration
	// PerRound is (E_{R-2} − E_0)/(R − 2): R−2 rounds that neither enter
	// the phase nor evaluate (with R < 3 rounds, what is left of Wall after
	// the clients' summed Enter and Observe time, per round).
	PerRound time.Duration
	// Enter is the wall time of entering the phase: E_0 − start − PerRound
	// (for the hyper-gradient phase, the linearization and the estimators'
	// set-up). Never negative.
	Enter time.Duration
	// Eval is the wall time of the evaluation after the last round: the
	// sink's Evaluated instant − E_{R−2} − PerRound. Never negative.
	Eval time.Duration
	// EnterClient and ObserveClient are the wall time spent inside the
	// clients' Enter and Observe calls, summed over clients. Under the
	// sequential driver, whose clients run one after another, they are the
	// exact wall times of entering and evaluating; under the actor driver
	// they mean little: clients run in parallel, and with more runnable
	// clients than cores a call's wall time includes the time its
	// goroutine waited while others ran.
	EnterClient, ObserveClient time.Duration
}

// At extrapolates the phase's wall time to rounds rounds with evals
// evaluations: Wall + (rounds − Rounds)·PerRound + (evals − 1)·Eval.
func (p PhaseTime) At(rounds, evals int) time.Duration {
	return p.Wall + time.Duration(rounds-p.Rounds)*p.PerRound + time.Duration(evals-1)*p.Eval
}

// OuterParts is one measured outer step: its SGP phase, hyper-gradient
// phase and λ-update ("outer" phase).
type OuterParts struct {
	Driver            string
	SGP, Hyper, Outer PhaseTime
}

// Measured is the wall time of the measured step (capped rounds).
func (p OuterParts) Measured() time.Duration { return p.SGP.Wall + p.Hyper.Wall + p.Outer.Wall }

// OuterTrial is one driver prepared to run an outer step: built, with its
// clients (fresh ones, from the run's factory) wrapped to record their
// timing. Run it once, then Close it.
type OuterTrial struct {
	o      *Outer
	name   string
	driver optim.Driver
	close  func()
	sink   *timingSink
}

// Prepare builds a fresh driver of the named kind whose clients the run's
// factory builds (outside any timer), each wrapped to record when its
// Receive calls return and how long its Enter and Observe calls take.
func (o *Outer) Prepare(driver string) (*OuterTrial, error) {
	sink := &timingSink{clocks: make([]*clientClock, o.Run.Net.N)}
	for i := range sink.clocks {
		sink.clocks[i] = &clientClock{}
	}
	base := o.Run.Factory()
	factory := func(i int) (optim.Client, error) {
		c, err := base(i)
		if err != nil {
			return nil, err
		}
		return &timedClient{Client: c, clk: sink.clocks[i]}, nil
	}
	d, closeDriver, err := NewDriver(driver, o.Run.Net, factory)
	if err != nil {
		return nil, err
	}
	return &OuterTrial{o: o, name: driver, driver: d, close: closeDriver, sink: sink}, nil
}

// Run executes one outer step (s = 0 of Alg. 1): the run's program
// (run.Run.Program) capped at TM SGP and MM hyper-gradient rounds,
// evaluated only after each phase's last round and stopped after the
// first λ-update, with a timing sink.
func (t *OuterTrial) Run() (OuterParts, error) {
	o := t.o
	prog := *o.Run.Program().(*pdbo.Alg1) // a fresh copy per trial: Alg1 keeps its step
	prog.SGPRounds, prog.HyperRounds = o.TM, o.MM
	prog.SGPEval, prog.HyperEval = 0, 0
	t.sink.phases = t.sink.phases[:0]
	t.sink.mark = time.Now()
	if _, err := t.driver.Execute(context.Background(), &firstStep{prog: &prog}, t.sink); err != nil {
		return OuterParts{}, fmt.Errorf("bench %s, %s: %w", o.Method, t.name, err)
	}
	parts := OuterParts{Driver: t.name}
	for _, p := range t.sink.phases {
		switch p.Name {
		case "sgp":
			parts.SGP = p
		case "hypergradient":
			parts.Hyper = p
		case "outer":
			parts.Outer = p
		}
	}
	return parts, nil
}

// Close releases the driver.
func (t *OuterTrial) Close() { t.close() }

// Measure runs one outer step with a fresh driver of the named kind
// (Prepare, then OuterTrial.Run).
func (o *Outer) Measure(driver string) (OuterParts, error) {
	t, err := o.Prepare(driver)
	if err != nil {
		return OuterParts{}, err
	}
	defer t.Close()
	return t.Run()
}

// Compare measures reps outer steps per driver, alternating which driver
// goes first, and returns every part's median per driver, in the order of
// Drivers.
func (o *Outer) Compare(reps int) ([]OuterParts, error) {
	ms, err := alternate(reps, o.Measure)
	if err != nil {
		return nil, err
	}
	out := make([]OuterParts, len(ms))
	for d := range out {
		out[d] = OuterParts{Driver: Drivers[d],
			SGP:   medianPhase(ms[d], func(p OuterParts) PhaseTime { return p.SGP }),
			Hyper: medianPhase(ms[d], func(p OuterParts) PhaseTime { return p.Hyper }),
			Outer: medianPhase(ms[d], func(p OuterParts) PhaseTime { return p.Outer })}
	}
	return out, nil
}

func medianPhase(ps []OuterParts, get func(OuterParts) PhaseTime) PhaseTime {
	out := get(ps[0])
	for _, f := range []func(*PhaseTime) *time.Duration{
		func(p *PhaseTime) *time.Duration { return &p.Wall },
		func(p *PhaseTime) *time.Duration { return &p.PerRound },
		func(p *PhaseTime) *time.Duration { return &p.Enter },
		func(p *PhaseTime) *time.Duration { return &p.Eval },
		func(p *PhaseTime) *time.Duration { return &p.EnterClient },
		func(p *PhaseTime) *time.Duration { return &p.ObserveClient },
	} {
		v := make([]float64, len(ps))
		for k, p := range ps {
			pt := get(p)
			v[k] = float64(*f(&pt))
		}
		*f(&out) = time.Duration(median(v))
	}
	return out
}

// evals is the number of evaluated rounds of a phase of rounds rounds that
// evaluates every every rounds (0: only the last).
func evals(rounds, every int) int {
	p := optim.PhaseSpec{Rounds: rounds, EvalEvery: every}
	k := 0
	for r := 0; r < rounds; r++ {
		if p.ShouldEval(r) {
			k++
		}
	}
	return k
}

// SGPAt is the SGP phase of p extrapolated to the scenario's T rounds and
// its evaluations.
func (o *Outer) SGPAt(p OuterParts) time.Duration { return p.SGP.At(o.T, evals(o.T, o.SGPEval)) }

// HyperAt is the hyper-gradient phase of p extrapolated to the scenario's
// rounds.
func (o *Outer) HyperAt(p OuterParts) time.Duration {
	if o.M == 0 {
		return p.Hyper.Wall
	}
	return p.Hyper.At(o.M, evals(o.M, o.HypEval))
}

// StepAt is the outer step of p extrapolated to the scenario's rounds.
func (o *Outer) StepAt(p OuterParts) time.Duration { return o.SGPAt(p) + o.HyperAt(p) + p.Outer.Wall }

// RunAt extrapolates p to the whole run as Alg. 1 runs it: S+1 SGP phases,
// S hyper-gradient phases and λ-updates (with S = 0: one SGP phase and one
// hyper-gradient estimate).
func (o *Outer) RunAt(p OuterParts) time.Duration {
	if o.Steps == 0 {
		return o.SGPAt(p) + o.HyperAt(p)
	}
	s := time.Duration(o.Steps)
	return (s+1)*o.SGPAt(p) + s*(o.HyperAt(p)+p.Outer.Wall)
}
