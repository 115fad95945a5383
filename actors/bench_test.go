package actors

import (
	"context"
	"fmt"
	"testing"

	"hgpsim/graph"
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
	nw, err := graph.Build(graph.Spec{Kind: "stochastic-directed", N: n, DeltaMin: 0.4, DeltaMax: 0.8}, seed)
	if err != nil {
		b.Fatal(err)
	}
	data, err := models.Synthetic(models.SyntheticSpec{Clients: n, Classes: 5, Features: 20,
		Train: 150, Val: 50, Test: 100, Alpha: 0.4, Separation: 0.5, Shift: 1, Noise: 1}, seed)
	if err != nil {
		b.Fatal(err)
	}
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
				var d optim.Driver
				if drv == "sequential" {
					d = optim.NewSequential(nw)
				} else {
					rt := New(nw, Options{})
					defer rt.Close()
					d = rt
				}
				p := &optim.Phase{Name: "sgp", Rounds: b.N, Clients: beh}
				b.ReportAllocs()
				b.ResetTimer()
				if _, err := d.Run(context.Background(), p, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
			})
		}
	}
}
