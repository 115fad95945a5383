package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// Rounds is a setup whose rounds are measured: a run's network and
// clients, and the phase every measurement runs. The clients are the real
// ones (run.Build, run.Run.Factory: pdbo.Client), built once; every
// measurement enters them into the phase afresh (outside the timer), so
// that all measurements do the same work, and then times the rounds alone
// with optim.Fixed clients around the behaviours.
type Rounds struct {
	// Name says what a round is: "sgp", "hgp" or "vr-hgp".
	Name string
	// Run is the built scenario the clients come from.
	Run     *run.Run
	clients []optim.Client
	phase   optim.PhaseSpec // what the clients enter; Rounds is set per measurement
}

// HGPWarmup is the number of SGP rounds the hyper-gradient setups run
// (sequential driver, at setup) before they linearize, so that the
// linearization is taken at a trained state with counted p̄, δ̄ (straight
// after the start they are 0, and a round would skip all mixing).
const HGPWarmup = 50

// QuickstartScenario is the scenario of the round measurements:
// scenarios.Default() at n clients, which is scenarios/quickstart.yaml
// (softmax on synthetic data with 20 features, 5 classes, 150 training
// examples per client, SGP batch 32 after communication (Eq. 4b), over a
// stochastic-directed network with δ̄ ~ U[0.4, 0.8] on every ordered
// pair), with no evaluation before a phase's last round.
func QuickstartScenario(n int) scenarios.Scenario {
	sc := scenarios.Default()
	sc.Name = "bench"
	sc.Clients = n
	sc.SGP.EvalEvery = 0
	return sc
}

// SGPRounds builds the quickstart setup at n clients for SGP rounds: in
// one round every client draws a minibatch, computes a softmax gradient,
// pushes [z, ω] over the links realized that round (≈ 0.6·n² messages in
// all) and mixes what reached it. Every measurement starts the SGP phase
// afresh from the common initial parameters at tick 0, so all do the same
// work.
func SGPRounds(n int) (*Rounds, error) {
	r, err := run.Build(QuickstartScenario(n))
	if err != nil {
		return nil, err
	}
	cs, err := buildClients(r)
	if err != nil {
		return nil, err
	}
	return &Rounds{Name: "sgp", Run: r, clients: cs, phase: optim.PhaseSpec{Name: "sgp"}}, nil
}

// HyperEstimators are the estimators HyperRounds measures.
var HyperEstimators = [2]string{"hgp", "vr-hgp"}

// HyperRounds builds the quickstart setup at n clients with the
// label-weights head on softmax (d_x = 105, d_λ = 5, λ⁽⁰⁾ = 0, no L2 on λ)
// and the named estimator ("hgp" or "vr-hgp" with α = 0.9, β = 0.1),
// simultaneous sampling, minibatch 32, F_i on the training data; it runs
// HGPWarmup SGP rounds. A round is one iteration: every client pushes u
// (HGP) or [u; w] (VR-HGP), mixes what reached it with the debiased
// weights of Eq. (12) and applies one InnerHVP and one InnerCross per
// vector it carries. Every measurement linearizes afresh (outside the
// timer) at the same SGP state.
func HyperRounds(n int, estimator string) (*Rounds, error) {
	sc := QuickstartScenario(n)
	sc.Model.Head = registry.Choose[models.Head]("label-weights")
	sc.Model.OuterL2 = 0
	sc.SGP.Rounds = HGPWarmup // the linearized map's step is the SGP step of the last warm-up round
	sc.Hypergradient.Estimator = estimator
	sc.Hypergradient.Sampling = "simultaneous"
	sc.Hypergradient.Batch = 32
	sc.Hypergradient.OuterData = "train"
	r, err := run.Build(sc)
	if err != nil {
		return nil, err
	}
	cs, err := buildClients(r)
	if err != nil {
		return nil, err
	}
	d, err := optim.NewSequential(r.Net, func(i int) (optim.Client, error) { return cs[i], nil })
	if err != nil {
		return nil, err
	}
	if _, err := d.Execute(context.Background(), &optim.Phases{{Name: "sgp", Rounds: HGPWarmup}}, optim.NoSink{}); err != nil {
		return nil, fmt.Errorf("bench: SGP warm-up: %w", err)
	}
	return &Rounds{Name: estimator, Run: r, clients: cs, phase: optim.PhaseSpec{Name: "hypergradient"}}, nil
}

func buildClients(r *run.Run) ([]optim.Client, error) {
	f := r.Factory()
	cs := make([]optim.Client, r.Net.N)
	for i := range cs {
		c, err := f(i)
		if err != nil {
			return nil, fmt.Errorf("building client %d: %w", i, err)
		}
		cs[i] = c
	}
	return cs, nil
}

// Net is the setup's network.
func (s *Rounds) Net() *graph.Network { return s.Run.Net }

// Trial is one driver prepared to run the rounds of a setup: the clients
// have entered the phase and the driver is built. Run it once, then Close
// it.
type Trial struct {
	driver optim.Driver
	close  func()
	phase  string
}

// Prepare enters every client into the setup's phase (for the
// hyper-gradient setups this linearizes) and builds a fresh driver of the
// named kind around the behaviours. Nothing of it is a round.
func (s *Rounds) Prepare(driver string) (*Trial, error) {
	beh := make([]optim.Behaviour, len(s.clients))
	for i, c := range s.clients {
		b, err := c.Enter(&s.phase)
		if err != nil {
			return nil, &optim.ClientError{Client: i, Phase: s.phase.Name, Round: -1, Err: err}
		}
		beh[i] = b
	}
	factory, _ := optim.FixedClients(beh)
	d, closeDriver, err := NewDriver(driver, s.Run.Net, factory)
	if err != nil {
		return nil, err
	}
	return &Trial{driver: d, close: closeDriver, phase: s.phase.Name}, nil
}

// Run runs rounds rounds as one phase starting at tick 0, evaluated only
// after its last round.
func (t *Trial) Run(rounds int) error {
	_, err := t.driver.Execute(context.Background(), &optim.Phases{{Name: t.phase, Rounds: rounds}}, optim.NoSink{})
	return err
}

// Close releases the driver.
func (t *Trial) Close() { t.close() }

// Measure prepares a fresh driver of the named kind and times one phase of
// rounds rounds with it; see Measurement for what is recorded.
func (s *Rounds) Measure(driver string, rounds int) (Measurement, error) {
	t, err := s.Prepare(driver)
	if err != nil {
		return Measurement{}, err
	}
	defer t.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := startPeakSampler()
	start := time.Now()
	err = t.Run(rounds)
	wall := time.Since(start)
	peakHeap := peak()
	runtime.ReadMemStats(&after)
	if err != nil {
		return Measurement{}, fmt.Errorf("bench %s, %s: %w", s.Name, driver, err)
	}
	return Measurement{Driver: driver, Rounds: rounds, Wall: wall,
		Allocs:    float64(after.Mallocs-before.Mallocs) / float64(rounds),
		SetupHeap: before.HeapAlloc, PeakHeap: max(peakHeap, after.HeapAlloc)}, nil
}

// Compare measures reps phases of rounds rounds per driver, alternating
// which driver goes first, and returns the medians in the order of
// Drivers (see Measurement).
func (s *Rounds) Compare(rounds, reps int) ([]Measurement, error) {
	ms, err := alternate(reps, func(driver string) (Measurement, error) { return s.Measure(driver, rounds) })
	if err != nil {
		return nil, err
	}
	out := make([]Measurement, len(ms))
	for d := range ms {
		out[d] = medianOf(ms[d])
	}
	return out, nil
}
