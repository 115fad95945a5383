package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
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

// OuterOptions are the knobs of WriteOuter.
type OuterOptions struct {
	Options
	Scenario string   // scenario file (DefaultScenario if empty)
	Methods  []string // pdbo-* methods
}

// WriteOuter measures one outer step of the scenario for every GOMAXPROCS
// value, client count and method with each driver (Outer.Compare) and
// writes, per setup, a Markdown table of the parts, the extrapolation to
// the scenario's rounds and the whole run, and at the end a summary table.
func WriteOuter(w io.Writer, o OuterOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	if len(o.Methods) == 0 {
		return fmt.Errorf("bench: no methods")
	}
	file := o.Scenario
	if file == "" {
		file = DefaultScenario
	}
	base, note, err := LoadScenario(file)
	if err != nil {
		return err
	}
	data := base.Data.Source.Name
	if note != "" {
		data = "synthetic (fallback)"
		note = " " + note
	}
	fmt.Fprintf(w, "hgpsim bench --phase outer: %s (data %s), one outer step at s = 0 run by the scenario's program "+
		"(run.Build, Alg. 1) through the driver with a timing sink: at most %d SGP and %d hyper-gradient rounds measured, "+
		"the rest extrapolated linearly per round; median of %d measurements per driver (drivers alternate); %s.%s\n",
		file, data, o.Rounds, o.Rounds, o.Reps, Machine(), note)
	var summary strings.Builder
	err = o.forProcs(w, func(p int) error {
		for _, n := range o.Clients {
			for _, m := range o.Methods {
				o.progress("GOMAXPROCS=%d, %d clients, %s ...", p, n, m)
				settle()
				out, err := NewOuter(base, m, n, o.Rounds)
				if err != nil {
					return fmt.Errorf("bench %s, %d clients: %w", m, n, err)
				}
				res, err := out.Compare(o.Reps)
				if err != nil {
					return err
				}
				out.writeTable(w, res)
				out.summaryRow(&summary, p, res)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSummary (ms unless stated; shares of the sequential step):\n\n")
	fmt.Fprintln(w, "| GOMAXPROCS | n | method | SGP / round (seq / par / actors) | HGP / round (seq / par / actors) | HGP round / SGP round (seq) | "+
		"evaluation (seq / par / actors) | linearization (seq / par / actors) | λ-update (seq / par / actors) | outer step at T, M (seq / par / actors) | "+
		"time / sequential (par / actors) | share SGP / evaluation / linearization + HGP (seq) | whole run at S (seq / par / actors) |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	fmt.Fprint(w, summary.String())
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// shares returns the shares of the SGP rounds, the evaluations and the
// hyper-gradient phase (linearization and rounds) in the extrapolated
// step, in percent.
func (o *Outer) shares(p OuterParts) (sgp, eval, hyper float64) {
	step := float64(o.StepAt(p))
	ev := float64(evals(o.T, o.SGPEval)) * float64(p.SGP.Eval)
	return 100 * (float64(o.SGPAt(p)) - ev) / step, 100 * ev / step, 100 * float64(o.HyperAt(p)) / step
}

func (o *Outer) writeTable(w io.Writer, res []OuterParts) {
	r := o.Run
	sc := r.Scenario
	trainN, fullBatch := 0, ""
	for _, d := range r.Data {
		trainN += d.Train.N
		if d.Train.N <= max(sc.SGP.Batch, sc.Hypergradient.Batch) {
			fullBatch = ", full batch on clients with fewer examples"
		}
	}
	n := r.Net.N
	fmt.Fprintf(w, "\n%d clients, %s (head %s, estimator %s): d_x = %d, d_λ = %d, %.0f training examples per client on average, "+
		"batch %d (SGP) / %d (HGP)%s; measured T' = %d of T = %d SGP rounds and M' = %d of M = %d hyper-gradient rounds; "+
		"building the run (data, network) took %.1f s.\n\n",
		n, o.Method, sc.Model.Head.Name, sc.Hypergradient.Estimator, r.Model.DimX(), r.Model.DimLambda(),
		float64(trainN)/float64(n), sc.SGP.Batch, sc.Hypergradient.Batch, fullBatch, o.TM, o.T, o.MM, o.M, o.Build.Seconds())
	fmt.Fprintln(w, "| driver | SGP ms/round | SGP phase ms (T') | evaluation ms | linearization ms | HGP ms/round | hyper-gradient phase ms (M') | λ-update ms | outer step ms, measured | outer step s at T, M (extrapolated) | SGP / evaluation / linearization + HGP share at T, M | time / sequential at T, M |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	for d, p := range res {
		rel := "1 (yardstick)"
		if d > 0 {
			rel = fmt.Sprintf("%.2f", float64(o.StepAt(p))/float64(o.StepAt(res[0])))
		}
		sg, ev, hy := o.shares(p)
		fmt.Fprintf(w, "| %s | %.2f | %.0f | %.1f | %.1f | %.2f | %.0f | %.2f | %.0f | %.2f | %.0f %% / %.1f %% / %.0f %% | %s |\n",
			p.Driver, ms(p.SGP.PerRound), ms(p.SGP.Wall), ms(p.SGP.Eval), ms(p.Hyper.Enter), ms(p.Hyper.PerRound),
			ms(p.Hyper.Wall), ms(p.Outer.Wall), ms(p.Measured()), o.StepAt(p).Seconds(), sg, ev, hy, rel)
	}
	fmt.Fprintf(w, "\nWhole run at S = %d outer steps, extrapolated ((S+1)·SGP phase + S·(hyper-gradient phase + λ-update)):", o.Steps)
	for _, p := range res {
		fmt.Fprintf(w, " %s %.0f s;", p.Driver, o.RunAt(p).Seconds())
	}
	fmt.Fprintf(w, " evaluation and linearization timed inside the sequential driver's clients "+
		"(exact there, as its clients run one after another): %.1f / %.1f ms.\n",
		ms(res[0].SGP.ObserveClient), ms(res[0].Hyper.EnterClient))
}

func (o *Outer) summaryRow(w io.Writer, procs int, res []OuterParts) {
	s := res[0]
	sg, ev, hy := o.shares(s)
	ratio := "—"
	if s.SGP.PerRound > 0 {
		ratio = fmt.Sprintf("%.1f", float64(s.Hyper.PerRound)/float64(s.SGP.PerRound))
	}
	// each joins one quantity over the drivers, in the order of Drivers.
	eachOf := func(res []OuterParts, format string, get func(OuterParts) float64) string {
		parts := make([]string, len(res))
		for d, p := range res {
			parts[d] = fmt.Sprintf(format, get(p))
		}
		return strings.Join(parts, " / ")
	}
	each := func(format string, get func(OuterParts) float64) string { return eachOf(res, format, get) }
	fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f %% / %.1f %% / %.0f %% | %s |\n",
		procs, o.Run.Net.N, o.Method,
		each("%.1f", func(p OuterParts) float64 { return ms(p.SGP.PerRound) }),
		each("%.1f", func(p OuterParts) float64 { return ms(p.Hyper.PerRound) }), ratio,
		each("%.1f", func(p OuterParts) float64 { return ms(p.SGP.Eval) }),
		each("%.1f", func(p OuterParts) float64 { return ms(p.Hyper.Enter) }),
		each("%.2f", func(p OuterParts) float64 { return ms(p.Outer.Wall) }),
		each("%.1f s", func(p OuterParts) float64 { return o.StepAt(p).Seconds() }),
		eachOf(res[1:], "%.2f", func(p OuterParts) float64 { return float64(o.StepAt(p)) / float64(o.StepAt(s)) }),
		sg, ev, hy,
		each("%.0f s", func(p OuterParts) float64 { return o.RunAt(p).Seconds() }))
}

// ValidMethod reports whether m is a method WriteOuter can measure: a
// pdbo-* method of scenarios.Methods.
func ValidMethod(m string) bool {
	return strings.HasPrefix(m, "pdbo-") && scenarios.Methods.Has(m)
}
