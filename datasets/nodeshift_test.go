package datasets

import (
	"math"
	"slices"
	"testing"
)

// fakeImages is n 28×28 images whose pixels encode (row, label), so that
// draws and rotations can be traced back.
func fakeImages(n int) *Dataset {
	d := &Dataset{X: make([]float64, n*784), Y: make([]int, n), N: n, D: 784, C: 10}
	for i := range n {
		d.Y[i] = i % 10
		for p := range 784 {
			d.X[i*784+p] = float64(i*1000 + p)
		}
	}
	return d
}

func TestNodeShift(t *testing.T) {
	train, test := fakeImages(500), fakeImages(200)
	spec := NodeShiftSpec{Nodes: 7, Setting: 4, Majority: true, Minority: 2, Train: 3000, Val: 50, Test: 60}
	data, err := NodeShift(spec, train, test, 3)
	if err != nil {
		t.Fatal(err)
	}
	if data[0].Val.N != 50 || data[0].Test.N != 60 || data[0].Train != data[0].Val {
		t.Fatalf("center: %d val, %d test", data[0].Val.N, data[0].Test.N)
	}
	inverse := map[int]int{}
	for _, p := range nodeShiftPerm {
		inverse[p[1]] = p[0]
	}
	superOf := map[int]int{}
	for g, cs := range nodeShiftSuper {
		for _, c := range cs {
			superOf[c] = g
		}
	}
	for k := 1; k < 7; k++ {
		d := data[k]
		if d.Train.N != 3000 || d.Val.N != 0 || d.Test.N != 0 {
			t.Fatalf("node %d: %d/%d/%d", k, d.Train.N, d.Val.N, d.Test.N)
		}
		majority := k > 2
		var counts [4]float64
		for i := range d.Train.N {
			row := d.Train.Row(i)
			src := int(math.Max(row[0], row[27*28+27])) / 1000 // the source image, rotated or not
			y := d.Train.Y[i]
			if majority {
				if from, ok := inverse[y]; ok {
					y = from
				}
				if row[0] == float64(src*1000) {
					t.Fatalf("node %d: a majority image is not rotated", k)
				}
			} else if row[0] != float64(src*1000) || y != train.Y[src] {
				t.Fatalf("node %d: a minority image was changed", k)
			}
			if y != train.Y[src] {
				t.Fatalf("node %d: label %d of source %d (label %d)", k, d.Train.Y[i], src, train.Y[src])
			}
			counts[superOf[y]]++
		}
		want := nodeShiftMinority
		if majority {
			want = nodeShiftMajority
		}
		for g := range 4 {
			if f := counts[g] / 3000; math.Abs(f-want[g]) > 0.04 {
				t.Errorf("node %d super-class %d: frequency %.3f, want %.2f", k, g, f, want[g])
			}
		}
	}
	// Deterministic.
	again, _ := NodeShift(spec, train, test, 3)
	for k := range data {
		for i, v := range data[k].Train.X {
			if again[k].Train.X[i] != v {
				t.Fatal("two builds differ")
			}
		}
	}
	if _, err := NodeShift(NodeShiftSpec{Nodes: 2, Setting: 1, Minority: 1, Train: 1, Val: 1, Test: 1}, train, test, 1); err == nil {
		t.Error("one node: no error")
	}
}

// rotate28 against moving each pixel: a clockwise quarter turn sends
// (row r, column c) to (c, 27 − r); k turns apply that k times.
func TestRotate28(t *testing.T) {
	img := fakeImages(1).X
	got := make([]float64, 784)
	for turns := range 4 {
		want := make([]float64, 784)
		for r := range 28 {
			for c := range 28 {
				rr, cc := r, c
				for range turns {
					rr, cc = cc, 27-rr
				}
				want[rr*28+cc] = img[r*28+c]
			}
		}
		rotate28(got, img, turns)
		for p := range got {
			if got[p] != want[p] {
				t.Fatalf("%d quarter turns: pixel %d is %v, want %v", turns, p, got[p], want[p])
			}
		}
	}
}

func TestPermTable(t *testing.T) {
	table, err := PermTable(PaperPermutation(), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 5, 0, 3, 4, 2, 6, 7, 8, 9} // 0→1, 1→5, 2→0, 5→2
	for c := range want {
		if table[c] != want[c] {
			t.Fatalf("paper's table %v, want %v", table, want)
		}
	}
	if table, err := PermTable([][]int{}, 10); err != nil || table[3] != 3 {
		t.Errorf("empty permutation: %v, %v; want the identity", table, err)
	}
	for name, bad := range map[string][][]int{
		"not closed":     {{2, 0}, {0, 1}},         // 1 is a to, never a from
		"changed twice":  {{2, 0}, {2, 1}, {0, 2}}, // 2 named twice as from
		"same target":    {{2, 0}, {1, 0}},
		"out of range":   {{10, 0}, {0, 10}},
		"negative":       {{-1, 0}, {0, -1}},
		"not a pair":     {{2, 0, 1}},
		"short":          {{2}},
		"swap then fold": {{3, 7}, {7, 3}, {4, 3}},
	} {
		if _, err := PermTable(bad, 10); err == nil {
			t.Errorf("%s %v: no error", name, bad)
		}
	}
	if table, err := PermTable([][]int{{3, 7}, {7, 3}, {4, 4}}, 10); err != nil || table[3] != 7 || table[7] != 3 || table[4] != 4 {
		t.Errorf("swap 3↔7 and 4→4: %v, %v", table, err)
	}
}

// The scenario's defaults are the paper's data, bit for bit the data of
// the zero spec; another permutation and angle change only the majority's
// labels and pixels, as asked.
func TestNodeShiftChosenHeterogeneity(t *testing.T) {
	train, test := fakeImages(500), fakeImages(200)
	d := &NodeShiftData{Setting: 4, Target: "minority", Minority: 2, Train: 400, Val: 30, Test: 40,
		Permutation: PaperPermutation(), Rotation: 90}
	if err := d.Validate(5); err != nil {
		t.Fatal(err)
	}
	zero := NodeShiftSpec{Nodes: 5, Setting: 4, Minority: 2, Train: 400, Val: 30, Test: 40}
	for seed := range uint64(2) {
		a, err := NodeShift(d.Spec(5), train, test, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NodeShift(zero, train, test, seed)
		for k := range a {
			if !slices.Equal(a[k].Train.X, b[k].Train.X) || !slices.Equal(a[k].Train.Y, b[k].Train.Y) {
				t.Fatalf("seed %d node %d: the paper's defaults differ from the zero spec", seed, k)
			}
		}
	}
	// Swap 3 and 7, turn by 180° (the same whichever direction is drawn).
	d.Permutation, d.Rotation = [][]int{{3, 7}, {7, 3}}, 180
	if err := d.Validate(5); err != nil {
		t.Fatal(err)
	}
	data, err := NodeShift(d.Spec(5), train, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < 5; k++ {
		for i := range data[k].Train.N {
			row := data[k].Train.Row(i)
			src := int(math.Max(row[0], row[783])) / 1000
			y, want := data[k].Train.Y[i], train.Y[src]
			if k > 2 {
				if to, ok := map[int]int{3: 7, 7: 3}[want]; ok {
					want = to
				}
				if row[0] != float64(src*1000+783) || row[783] != float64(src*1000) {
					t.Fatalf("node %d: a majority image is not turned by 180°", k)
				}
			} else if row[0] != float64(src*1000) {
				t.Fatalf("node %d: a minority image was turned", k)
			}
			if y != want {
				t.Fatalf("node %d: label %d of source label %d, want %d", k, y, train.Y[src], want)
			}
		}
	}
	for _, bad := range []*NodeShiftData{
		{Setting: 2, Target: "minority", Minority: 2, Train: 1, Val: 1, Test: 1, Permutation: [][]int{{2, 0}}, Rotation: 90},
		{Setting: 3, Target: "minority", Minority: 2, Train: 1, Val: 1, Test: 1, Rotation: 45},
		{Setting: 3, Target: "minority", Minority: 2, Train: 1, Val: 1, Test: 1, Rotation: 0},
		{Setting: 3, Target: "minority", Minority: 2, Train: 1, Val: 1, Test: 1, Rotation: 360},
	} {
		if err := bad.Validate(5); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
