package datasets

import (
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
