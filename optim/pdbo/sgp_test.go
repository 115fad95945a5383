package pdbo

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// paperNetworks are the four networks of the PDBO paper's experiments.
// (the defaults of the stochastic kinds are the paper's δ̄ ~ U[0.4, 0.8],
// of static-undirected its p = 0.4 with FMMC weights).
var paperNetworks = []netSpec{
	net("fully-connected"), net("static-undirected"), net("stochastic-undirected"), net("stochastic-directed"),
}

func smallData(t testing.TB, n int, seed uint64) []datasets.ClientData {
	t.Helper()
	data, err := datasets.Synthetic(datasets.SyntheticSpec{Clients: n, Classes: 3, Features: 4,
		Train: 30, Val: 10, Test: 10, Alpha: 0.5, Separation: 1, Shift: 1, Noise: 1}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pooledMinimizer solves min_x mean over the union of the clients' training
// data (equal client sizes make it (1/n)Σ f_i) by plain full-batch gradient
// descent: an independent reference that shares no code with SGP.
func pooledMinimizer(t testing.TB, m models.Model[float64], data []datasets.ClientData) []float64 {
	t.Helper()
	parts := make([]*datasets.Dataset, len(data))
	for i, d := range data {
		parts[i] = d.Train
	}
	pool := datasets.Pool(parts...)
	x := make([]float64, m.Dim())
	g := make([]float64, m.Dim())
	for it := 0; it < 200000; it++ {
		m.Grad(g, x, pool, nil)
		if floats.Norm(g, 2) < 1e-13 {
			return x
		}
		floats.AddScaled(x, -0.5, g)
	}
	t.Fatalf("reference gradient descent did not converge: ‖∇f‖ = %g", floats.Norm(g, 2))
	return nil
}

func TestSGPConvergesToPooledMinimizer(t *testing.T) {
	const n, rounds = 10, 6000
	// Tolerance: relative distance of every client's x_i to the pooled
	// minimizer. A constant step leaves an O(α) bias from heterogeneous
	// data; the inverse schedule α_t = 1/(1+0.01t) shrinks it to ~1e-3.
	const tol = 5e-3
	data := smallData(t, n, 7)
	model := models.NewSoftmax[float64](4, 3, 0.1)
	xStar := pooledMinimizer(t, model, data)
	for _, spec := range paperNetworks {
		for _, variant := range []Variant{BeforeComm, AfterComm} {
			t.Run(spec.Name+"/"+variant.String(), func(t *testing.T) {
				nw := buildNet(t, spec, n, 3)
				x0 := make([]float64, model.Dim())
				model.Init(x0, rng.New(1, rng.Global, rng.PurposeInit))
				cfg := SGPConfig{Variant: variant, LR: optim.Schedule{Kind: "inverse", Base: 1, Decay: 0.05, Power: 1}}
				clients := make([]*SGP[float64], n)
				b := make([]optim.Behaviour, n)
				for i := range clients {
					clients[i] = NewSGP(i, n, model.Clone(), data[i], x0, cfg, 1)
					b[i] = clients[i]
				}
				if err := runOnce(t, nw, "sgp", rounds, b); err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				for _, c := range clients {
					worst = math.Max(worst, floats.Distance(c.X(), xStar, 2)/floats.Norm(xStar, 2))
				}
				t.Logf("max_i ‖x_i − x*‖/‖x*‖ = %.3g after %d rounds", worst, rounds)
				if worst > tol {
					t.Errorf("SGP did not reach the pooled minimizer: relative error %.3g > %g", worst, tol)
				}
			})
		}
	}
}
