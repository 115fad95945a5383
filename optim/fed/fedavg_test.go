package fed

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/optimtest"
)

// starOf is a star of m clients around a server.
func starOf(t *testing.T, m int, star *graph.Star, seed uint64) *graph.Network {
	t.Helper()
	nw, err := graph.Build(registry.Choice[graph.Topology]{Name: "star", Params: star}, m+1, seed)
	if err != nil {
		t.Fatal(err)
	}
	return nw
}

// fedAvgSetup is a star of m clients around a server with equal data sizes.
func fedAvgSetup(t *testing.T, m int, star *graph.Star) *optim.Setup {
	t.Helper()
	nw := starOf(t, m, star, 7)
	data, err := datasets.Synthetic(datasets.SyntheticSpec{Clients: m + 1, Classes: 3, Features: 4,
		Train: 30, Val: 5, Test: 10, Alpha: 0.5, Separation: 1, Shift: 0.5, Noise: 1}, 7)
	if err != nil {
		t.Fatal(err)
	}
	model := models.Plain(models.NewSoftmax[float64](4, 3, 0.01))
	x0 := make([]float64, model.DimX())
	model.Init(x0, rng.New(7, rng.Global, rng.PurposeInit))
	return &optim.Setup{Net: nw, Data: data, Model: model, X0: x0, Seed: 7, Test: datasets.Pool(data[0].Test, data[1].Test)}
}

// runFedAvg runs f on s and returns the server's final global model.
func runFedAvg(t *testing.T, f optim.Algorithm, s *optim.Setup) ([]float64, optim.Traffic) {
	t.Helper()
	clients, tr := optimtest.Execute(t, f, s, nil, nil, nil)
	return clients[0].(*optim.Fixed).Behaviour.(*Server).Strategy.(*Mean).X, tr
}

// With every client taking part, one full-batch local step and links that
// never fail, federated averaging is centralized gradient descent on the
// mean of the clients' losses.
func TestFedAvgIsGradientDescent(t *testing.T) {
	const m, rounds, lr = 5, 40, 0.3
	s := fedAvgSetup(t, m, &graph.Star{Prob: 1})
	got, tr := runFedAvg(t, &FedAvg{optim.FederatedTraining{Rounds: rounds, Participation: 1, LocalSteps: 1, LR: lr}}, s)
	if tr.Messages != 2*m*rounds || tr.Dropped != 0 {
		t.Errorf("traffic %+v, want %d messages and no drops", tr, 2*m*rounds)
	}
	x := append([]float64(nil), s.X0...)
	g, sum := make([]float64, len(x)), make([]float64, len(x))
	model := s.Model.Clone()
	for range rounds {
		clear(sum)
		for i := 1; i <= m; i++ {
			model.InnerGrad(g, x, nil, s.Data[i].Train, nil)
			floats.Add(sum, g)
		}
		floats.AddScaled(x, -lr/m, sum)
	}
	if d := floats.Distance(got, x, 2) / floats.Norm(x, 2); d > 1e-12 {
		t.Errorf("FedAvg ends %.3g (relative) from gradient descent", d)
	}
}

// Lost uploads are simply missing from the server's average: the run goes
// on, drops are counted, and the result is the same on both drivers' terms
// (deterministic: two runs agree bit for bit).
func TestFedAvgWithLostUploads(t *testing.T) {
	const m = 8
	f := &FedAvg{optim.FederatedTraining{Rounds: 30, Participation: 0.5, LocalSteps: 2, LR: 0.2, Batch: 10}}
	a, trA := runFedAvg(t, f, fedAvgSetup(t, m, &graph.Star{Prob: 1, ToHub: 0.6}))
	b, _ := runFedAvg(t, f, fedAvgSetup(t, m, &graph.Star{Prob: 1, ToHub: 0.6}))
	if trA.Dropped == 0 {
		t.Fatal("no upload was lost: the test proves nothing")
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			t.Fatal("two identical runs differ")
		}
	}
	if !optim.AllFinite(a) {
		t.Fatal("non-finite model")
	}
}
