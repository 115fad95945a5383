package models

import (
	"math"
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
	for from, to := range nodeShiftPerm {
		inverse[to] = from
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

// A rotation by 90° one way, then the other, is the identity; four in the
// same direction too.
func TestRotate28(t *testing.T) {
	img := fakeImages(1).X
	a, b := make([]float64, 784), make([]float64, 784)
	rotate28(a, img, true)
	rotate28(b, a, false)
	for p := range b {
		if b[p] != img[p] {
			t.Fatal("clockwise then anti-clockwise is not the identity")
		}
	}
	rotate28(a, img, true)
	rotate28(b, a, true)
	rotate28(a, b, true)
	rotate28(b, a, true)
	for p := range b {
		if b[p] != img[p] {
			t.Fatal("four rotations are not the identity")
		}
	}
}
