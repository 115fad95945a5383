package bench

import (
	"context"
	"fmt"
	"testing"

	"hgpsim/actors"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// benchSetup is the quickstart scenario (scenarios/quickstart.yaml) at n
// clients: softmax on synthetic data (20 features, 5 classes, 150 training
// examples per client, batch 32, Eq. 4b) over a stochastic-directed network
// with δ̄ ~ U[0.4, 0.8].
func benchSetup(b *testing.B, n int) (*graph.Network, []optim.Behaviour) {
	b.Helper()
	const seed = 1
	nw, data := benchNetData(b, n, seed)
	m := models.NewSoftmax(20, 5, 1e-3)
	x0 := make([]float64, m.Dim())
	m.Init(x0, rng.New(seed, rng.Global, rng.PurposeInit))
	cfg := optim.SGPConfig{Variant: optim.AfterComm, BatchSize: 32,
		LR: optim.Schedule{Kind: "multistep", Base: 0.05, Milestones: []int{500, 550}, Gamma: 0.1}}
	beh := make([]optim.Behaviour, n)
	for i := range beh {
		beh[i] = optim.NewSGP(i, n, m.Clone(), data[i], x0, cfg, seed)
	}
	return nw, beh
}

// BenchmarkSGPRound measures one SGP round (every client computes a minibatch
// gradient, pushes, mixes) under both drivers. One op is one round: b.N
// rounds run as a single phase that evaluates only after its last round, so
// ns/op is ns per round and allocs/op allocations per round. Building the
// network, the data and (for actors) the actor system is outside the timer.
func BenchmarkSGPRound(b *testing.B) {
	for _, drv := range []string{"sequential", "actors"} {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/n=%d", drv, n), func(b *testing.B) {
				nw, beh := benchSetup(b, n)
				timePhase(b, drv, nw, "sgp", beh)
			})
		}
	}
}

// hgpWarmup is the number of SGP rounds run before the hyper-gradient
// benchmarks linearize, so that they start from a trained state with
// counted p̄, δ̄ estimates.
const hgpWarmup = 50

// hgpSetup is benchSetup with the label-weights head on softmax
// (models.LabelWeights(models.NewSoftmax(20, 5, 1e-3), 0): d_x = 105,
// d_λ = 5, λ = 0) after hgpWarmup SGP rounds of the sequential driver. It
// returns one hyper-gradient estimator per client built by est from the
// client's linearization (F_i on its training data, minibatch 32, the SGP
// step 0.05 of the warm-up rounds).
func hgpSetup(b *testing.B, n int, est func(optim.Linearization) optim.Behaviour) (*graph.Network, []optim.Behaviour) {
	b.Helper()
	const seed = 1
	nw, data := benchNetData(b, n, seed)
	m := models.LabelWeights(models.NewSoftmax(20, 5, 1e-3), 0)
	x0 := make([]float64, m.DimX())
	m.Init(x0, rng.New(seed, rng.Global, rng.PurposeInit))
	lambda := make([]float64, m.DimLambda())
	cfg := optim.SGPConfig{Variant: optim.AfterComm, BatchSize: 32,
		LR: optim.Schedule{Kind: "multistep", Base: 0.05, Milestones: []int{500, 550}, Gamma: 0.1}}
	sgp := make([]*optim.SGP, n)
	beh := make([]optim.Behaviour, n)
	for i := range sgp {
		sgp[i] = optim.NewSGPBilevel(i, n, m.Clone(), lambda, data[i], x0, cfg, seed)
		beh[i] = sgp[i]
	}
	factory, _ := optim.FixedClients(beh)
	d, err := optim.NewSequential(nw, factory)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := d.Execute(context.Background(), &optim.Phases{{Name: "sgp", Rounds: hgpWarmup}}, optim.NoSink{}); err != nil {
		b.Fatal(err)
	}
	for i, c := range sgp {
		beh[i] = est(c.Linearize(data[i].Train, cfg.LR.At(hgpWarmup-1), 32, seed))
	}
	return nw, beh
}

// benchHyper times b.N rounds of the estimator est under both drivers at
// n = 10 and 100, with simultaneous sampling (one round = one iteration:
// every client mixes what reached it and applies one Hessian-vector and
// one cross product per vector it carries). One op is one round; the SGP
// warm-up, the linearization and (for actors) the actor system are outside
// the timer.
func benchHyper(b *testing.B, est func(optim.Linearization) optim.Behaviour) {
	for _, drv := range []string{"sequential", "actors"} {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/n=%d", drv, n), func(b *testing.B) {
				nw, beh := hgpSetup(b, n, est)
				timePhase(b, drv, nw, "hypergradient", beh)
			})
		}
	}
}

// BenchmarkHGPRound measures one round of HGP (Eq. 12): push u, mix,
// one InnerHVP and one InnerCross per client.
func BenchmarkHGPRound(b *testing.B) {
	benchHyper(b, func(lin optim.Linearization) optim.Behaviour {
		return optim.NewHGP(lin, optim.Simultaneous)
	})
}

// BenchmarkVRHGPRound measures one round of VR-HGP (α = 0.9, β = 0.1, the
// paper's values): push [u; w] (twice HGP's payload), mix both, two
// InnerHVP and two InnerCross per client.
func BenchmarkVRHGPRound(b *testing.B) {
	benchHyper(b, func(lin optim.Linearization) optim.Behaviour {
		return optim.NewVRHGP(lin, 0.9, 0.1, optim.Simultaneous)
	})
}

// timePhase runs b.N rounds of one phase on the named driver, timing only
// the phase, and reports rounds per second.
func timePhase(b *testing.B, drv string, nw *graph.Network, name string, beh []optim.Behaviour) {
	factory, _ := optim.FixedClients(beh)
	var d optim.Driver
	if drv == "sequential" {
		s, err := optim.NewSequential(nw, factory)
		if err != nil {
			b.Fatal(err)
		}
		d = s
	} else {
		rt, err := actors.New(nw, factory, actors.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer rt.Close()
		d = rt
	}
	p := &optim.Phases{{Name: name, Rounds: b.N}}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := d.Execute(context.Background(), p, optim.NoSink{}); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
}

// benchNetData is the quickstart network and synthetic data at n clients.
func benchNetData(b *testing.B, n int, seed uint64) (*graph.Network, []models.ClientData) {
	b.Helper()
	nw, err := graph.Build(registry.Choose[graph.Topology]("stochastic-directed"), n, seed)
	if err != nil {
		b.Fatal(err)
	}
	data, err := models.Synthetic(models.SyntheticSpec{Clients: n, Classes: 5, Features: 20,
		Train: 150, Val: 50, Test: 100, Alpha: 0.4, Separation: 0.5, Shift: 1, Noise: 1}, seed)
	if err != nil {
		b.Fatal(err)
	}
	return nw, data
}
