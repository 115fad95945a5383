package models

import (
	"math"
	"slices"
	"testing"
)

func TestRow(t *testing.T) {
	d := &Dataset{X: []float64{1, 2, 3, 4, 5, 6}, Y: []int{0, 1, 0}, N: 3, D: 2, C: 2}
	row := d.Row(1)
	if !slices.Equal(row, []float64{3, 4}) {
		t.Fatalf("Row(1) = %v", row)
	}
	_ = append(row, 99) // must not overwrite row 2
	if d.X[4] != 5 {
		t.Errorf("append to Row(1) overwrote row 2")
	}
	mustPanic(t, "Row(3)", "out of range", func() { d.Row(3) })
}

func TestPool(t *testing.T) {
	a := &Dataset{X: []float64{1, 2, 3, 4}, Y: []int{0, 1}, N: 2, D: 2, C: 3}
	b := &Dataset{X: []float64{5, 6}, Y: []int{2}, N: 1, D: 2, C: 3}
	p := Pool(a, b)
	if p.N != 3 || p.D != 2 || p.C != 3 {
		t.Fatalf("Pool shape N=%d D=%d C=%d", p.N, p.D, p.C)
	}
	if !slices.Equal(p.X, []float64{1, 2, 3, 4, 5, 6}) || !slices.Equal(p.Y, []int{0, 1, 2}) {
		t.Fatalf("Pool = %v %v", p.X, p.Y)
	}
	p.X[0] = -1
	if a.X[0] != 1 {
		t.Errorf("Pool aliases its parts")
	}
	if e := Pool(); e.N != 0 || len(e.X) != 0 {
		t.Errorf("Pool() = %+v, want empty", e)
	}
	c := &Dataset{X: []float64{1, 2, 3}, Y: []int{0}, N: 1, D: 3, C: 3}
	mustPanic(t, "Pool with different D", "part 1", func() { Pool(a, c) })
}

func TestPooledLossIsAverageOfClientLosses(t *testing.T) {
	// Equal sizes per client make the pooled objective the mean of the client
	// objectives: the identity the decentralized problem relies on.
	data, err := Synthetic(SyntheticSpec{
		Clients: 5, Classes: 3, Features: 4, Train: 30, Val: 1, Test: 1,
		Alpha: 0.5, Separation: 1, Shift: 1, Noise: 1,
	}, 3)
	if err != nil {
		t.Fatal(err)
	}
	m := NewSoftmax(4, 3, 0.2)
	x := randomVec(testRand(t, 0), m.Dim(), 1)
	parts := make([]*Dataset, len(data))
	gAvg := make([]float64, m.Dim())
	g := make([]float64, m.Dim())
	var avg float64
	for i, cd := range data {
		parts[i] = cd.Train
		avg += m.Grad(g, x, cd.Train, nil) / float64(len(data))
		for j := range g {
			gAvg[j] += g[j] / float64(len(data))
		}
	}
	pooled := Pool(parts...)
	gPool := make([]float64, m.Dim())
	f := m.Grad(gPool, x, pooled, nil)
	if math.Abs(f-avg) > 1e-13*math.Abs(f) {
		t.Errorf("pooled loss %v, average of client losses %v", f, avg)
	}
	if e := relErr(gPool, gAvg); e > 1e-13 {
		t.Errorf("pooled gradient differs from the average by %.3g", e)
	}
}
