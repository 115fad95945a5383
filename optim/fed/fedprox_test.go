package fed

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/optim"
)

// With mu = 0 FedProx is FedAvg, bit for bit, sampling, lost uploads and
// minibatches included.
func TestFedProxWithoutMuIsFedAvg(t *testing.T) {
	star := &graph.Star{Prob: 1, ToHub: 0.7}
	avg := FedAvg{optim.FederatedTraining{Rounds: 12, Participation: 0.5, LocalSteps: 3, LR: 0.2, Batch: 8}}
	a, trA := runFedAvg(t, &avg, fedAvgSetup(t, 6, star))
	b, trB := runFedAvg(t, &FedProx{FedAvg: avg}, fedAvgSetup(t, 6, star))
	if trA != trB {
		t.Errorf("traffic %+v, FedAvg's %+v", trB, trA)
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			t.Fatalf("coordinate %d: FedProx(mu = 0) %v, FedAvg %v", k, b[k], a[k])
		}
	}
	c, _ := runFedAvg(t, &FedProx{FedAvg: avg, Mu: 0.5}, fedAvgSetup(t, 6, star))
	if floats.Equal(a, c) {
		t.Error("mu = 0.5 gives FedAvg's result")
	}
}

// A client's local steps are x ← x − lr(∇f(x; batch) + μ(x − x_global)),
// checked against a naive loop over the same minibatches, and a larger μ
// keeps the client nearer the global model.
func TestFedProxLocalSteps(t *testing.T) {
	s := fedAvgSetup(t, 3, &graph.Star{Prob: 1})
	const steps, lr, batch = 6, 0.3, 5
	global := make([]float64, len(s.X0))
	for k := range global {
		global[k] = s.X0[k] + 0.1*float64(k%3)
	}
	dist := map[float64]float64{}
	for _, mu := range []float64{0, 0.5, 2} {
		p := &FedProx{Mu: mu}
		tr := NewSGD(s, 1, steps, lr, batch, func(g, x, gl []float64) {
			floats.AddScaled(g, p.Mu, x)
			floats.AddScaled(g, -p.Mu, gl)
		})
		if err := tr.Start(global); err != nil {
			t.Fatal(err)
		}
		got, err := tr.Train()
		if err != nil {
			t.Fatal(err)
		}
		// The reference: the same stream of minibatches, the update
		// written out coordinate by coordinate.
		b := optim.NewBatcher(s.Data[1].Train.N, batch, rng.NewStream(s.Seed, 1, rng.PurposeBatch))
		x, g := append([]float64(nil), global...), make([]float64, len(global))
		for range steps {
			s.Model.InnerGrad(g, x, nil, s.Data[1].Train, b.Next())
			for k := range x {
				x[k] -= lr * (g[k] + mu*(x[k]-global[k]))
			}
		}
		if d := floats.Distance(got, x, math.Inf(1)); d > 1e-14 {
			t.Errorf("mu %v: the trainer is %.3g from the naive update", mu, d)
		}
		dist[mu] = floats.Distance(got, global, 2)
	}
	if !(dist[2] < dist[0.5] && dist[0.5] < dist[0]) {
		t.Errorf("distances to the global model %v: not decreasing in mu", dist)
	}
}

func TestFedProxValidate(t *testing.T) {
	ok := FedAvg{optim.FederatedTraining{Rounds: 1, Participation: 1, LocalSteps: 1, LR: 0.1}}
	for _, mu := range []float64{-1, math.Inf(1), math.NaN()} {
		if err := (&FedProx{FedAvg: ok, Mu: mu}).Validate(3); err == nil {
			t.Errorf("mu %v accepted", mu)
		}
	}
	if err := (&FedProx{FedAvg: ok, Mu: 0.1}).Validate(3); err != nil {
		t.Error(err)
	}
}
