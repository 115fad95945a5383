package models

import (
	"math"
	"testing"

	"hgpsim/datasets"
)

func TestPooledLossIsAverageOfClientLosses(t *testing.T) {
	// Equal sizes per client make the pooled objective the mean of the client
	// objectives: the identity the decentralized problem relies on.
	clients, err := datasets.Synthetic(datasets.SyntheticSpec{
		Clients: 5, Classes: 3, Features: 4, Train: 30, Val: 1, Test: 1,
		Alpha: 0.5, Separation: 1, Shift: 1, Noise: 1,
	}, 3)
	if err != nil {
		t.Fatal(err)
	}
	m := NewSoftmax[float64](4, 3, 0.2)
	x := randomVec(testRand(t, 0), m.Dim(), 1)
	parts := make([]*datasets.Dataset, len(clients))
	gAvg := make([]float64, m.Dim())
	g := make([]float64, m.Dim())
	var avg float64
	for i, cd := range clients {
		parts[i] = cd.Train
		avg += m.Grad(g, x, cd.Train, nil) / float64(len(clients))
		for j := range g {
			gAvg[j] += g[j] / float64(len(clients))
		}
	}
	pooled := datasets.Pool(parts...)
	gPool := make([]float64, m.Dim())
	f := m.Grad(gPool, x, pooled, nil)
	if math.Abs(f-avg) > 1e-13*math.Abs(f) {
		t.Errorf("pooled loss %v, average of client losses %v", f, avg)
	}
	if e := relErr(gPool, gAvg); e > 1e-13 {
		t.Errorf("pooled gradient differs from the average by %.3g", e)
	}
}
