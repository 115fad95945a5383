package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"hgpsim/actors"
	"hgpsim/models"
	"hgpsim/optim"
)

// benchScenario is the scenario whose outer step BenchmarkOuterStep times.
const benchScenario = "paper/personalization-stod.yaml"

// benchRuns caches one built run per data set, method and client count, so
// that the data are loaded once per benchmark binary and not once per b.N
// trial. The runs' clients carry on from one benchmark to the next, which
// does not change the cost of a round.
var benchRuns = map[string]*Run{}

// benchWarmup is the number of SGP rounds run once after building.
const benchWarmup = 10

func benchRun(b *testing.B, data, method string, n int) *Run {
	b.Helper()
	key := fmt.Sprintf("%s/%s/%d", data, method, n)
	if r, ok := benchRuns[key]; ok {
		return r
	}
	sc, err := Load(benchScenario)
	if err != nil {
		b.Fatal(err)
	}
	switch data {
	case "synthetic":
		sc.Data = Default().Data
	case "fashion-mnist":
		if missing := models.FashionMNIST(sc.Data.Source.Params.(*models.IDXData).Dir).Missing(); len(missing) > 0 {
			b.Skipf("Fashion-MNIST is not installed (%s missing); apt-get install %s", missing[0], models.FashionMNISTPackage)
		}
	}
	sc.Method = method
	sc.Clients = n
	r, err := Build(sc)
	if err != nil {
		b.Fatal(err)
	}
	// A few SGP rounds first, so that every client has counted p̄ and δ̄:
	// straight after Build they are 0, and a hyper-gradient round would
	// skip all mixing (a link never seen has coefficient 0).
	warm := r.SGPPhase()
	warm.Rounds = benchWarmup
	if _, err := optim.NewSequential(r.Net).Run(context.Background(), warm, nil); err != nil {
		b.Fatal(err)
	}
	benchRuns[key] = r
	return r
}

// benchSilent hides a behaviour's Observe, so the driver does not evaluate
// after the last round.
type benchSilent struct{ optim.Behaviour }

// benchObserving sends nothing and reports its client's Observe: a
// one-round phase of it is the evaluation after an SGP run.
type benchObserving struct{ o optim.Observer }

func (benchObserving) Send(int, []int, []float64) []float64 { return nil }
func (benchObserving) Receive(int, []optim.Message) error   { return nil }
func (b benchObserving) Observe() optim.Stats               { return b.o.Observe() }

// BenchmarkOuterStep times the parts of one PDBO outer step (Alg. 1, as
// outerLoop runs it) of the Fashion-MNIST personalization scenario
// (paper/personalization-stod.yaml) for pdbo-da and pdbo-mtl-da at n = 20
// and 100 under both drivers, on the synthetic quickstart data
// (Default().Data: 20 features, 5 classes) and on Fashion-MNIST when it is
// installed (skipped otherwise). Ops:
//
//   - sgp-round: one SGP round without evaluation;
//   - evaluation: one evaluation of every client (Observe: losses and
//     accuracies on all splits and F_i), a one-round phase through the driver;
//   - linearization: Run.HypergradientPhase, each client's ⟨c^y⟩, ⟨c^λ⟩ and
//     estimator (not through the driver: scenarios does it on the caller);
//   - hgp-round: one round of the scenario's estimator (VR-HGP on this
//     stochastic-directed network, simultaneous sampling, batch 128);
//   - lambda-update: every client's Adam step on λ, a one-round phase.
//
// An outer step costs T·sgp-round + evaluation + linearization +
// M·hgp-round + lambda-update with the scenario's T = 300, M = 100.
// `hgpsim bench --phase outer` measures the same parts end to end.
func BenchmarkOuterStep(b *testing.B) {
	for _, data := range []string{"synthetic", "fashion-mnist"} {
		for _, method := range []string{"pdbo-da", "pdbo-mtl-da"} {
			for _, n := range []int{20, 100} {
				for _, drv := range []string{"sequential", "actors"} {
					b.Run(fmt.Sprintf("%s/%s/n=%d/%s", data, method, n, drv), func(b *testing.B) {
						benchOuterParts(b, data, method, n, drv)
					})
				}
			}
		}
	}
}

func benchOuterParts(b *testing.B, data, method string, n int, drv string) {
	run := benchRun(b, data, method, n)
	newDriver := func(b *testing.B) optim.Driver {
		if drv == "sequential" {
			return optim.NewSequential(run.Net)
		}
		rt := actors.New(run.Net, actors.Options{RoundTimeout: time.Minute})
		b.Cleanup(rt.Close)
		return rt
	}
	sc := run.Scenario
	lr := sc.Hypergradient.LR
	if lr == 0 {
		lr = sc.SGP.LR.schedule().At(sc.SGP.Rounds - 1)
	}
	ctx := context.Background()
	runPhase := func(b *testing.B, d optim.Driver, p *optim.Phase) {
		if _, err := d.Run(ctx, p, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("sgp-round", func(b *testing.B) {
		d := newDriver(b)
		beh := make([]optim.Behaviour, n)
		for i, c := range run.SGP {
			beh[i] = benchSilent{c}
		}
		b.ReportAllocs()
		b.ResetTimer()
		runPhase(b, d, &optim.Phase{Name: "sgp", Rounds: b.N, Clients: beh})
	})
	b.Run("evaluation", func(b *testing.B) {
		d := newDriver(b)
		beh := make([]optim.Behaviour, n)
		for i, c := range run.SGP {
			beh[i] = benchObserving{c}
		}
		p := &optim.Phase{Name: "evaluation", Rounds: 1, Clients: beh}
		b.ReportAllocs()
		for b.Loop() {
			runPhase(b, d, p)
		}
	})
	b.Run("linearization", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			run.HypergradientPhase(lr)
		}
	})
	b.Run("hgp-round", func(b *testing.B) {
		d := newDriver(b)
		p, _, _ := run.HypergradientPhase(lr)
		p.Rounds = b.N
		b.ReportAllocs()
		b.ResetTimer()
		runPhase(b, d, p)
	})
	b.Run("lambda-update", func(b *testing.B) {
		d := newDriver(b)
		_, est, _ := run.HypergradientPhase(lr)
		l := &outerLoop{run: run}
		beh := make([]optim.Behaviour, n)
		for i := range beh {
			lambda := append([]float64(nil), run.Lambda[i]...) // run.Lambda stays λ⁽⁰⁾
			beh[i] = &optim.OuterStep{Lambda: lambda, Est: est[i], Opt: l.optimizer()}
		}
		p := &optim.Phase{Name: "outer", Rounds: 1, Clients: beh}
		b.ReportAllocs()
		for b.Loop() {
			runPhase(b, d, p)
		}
	})
}
