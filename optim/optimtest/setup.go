package optimtest

import (
	"testing"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// StarSetup is a server (node 0) and len(data)−1 clients on star, with
// model initialized from seed's global stream; the server's test data is
// the run's.
func StarSetup(t *testing.T, star *graph.Star, data []datasets.ClientData, model models.Bilevel[float64], seed uint64) *optim.Setup {
	t.Helper()
	nw, err := graph.Build(registry.Choice[graph.Topology]{Name: "star", Params: star}, len(data), seed)
	if err != nil {
		t.Fatal(err)
	}
	x0 := make([]float64, model.DimX())
	model.Init(x0, rng.New(seed, rng.Global, rng.PurposeInit))
	return &optim.Setup{Net: nw, Data: data, Model: model, X0: x0, Seed: seed, Test: data[0].Test}
}
