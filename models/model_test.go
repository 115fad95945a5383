package models

import (
	"hgpsim/datasets"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

// batches returns the batches every model test runs on: the full batch and a
// minibatch with a repeated row (sampling with replacement must weigh it twice).
func batches(n int) map[string][]int {
	return map[string][]int{
		"full":      nil,
		"minibatch": {3, 0, n - 1, 5, 5, 1},
	}
}

func TestGradMatchesFiniteDifferences(t *testing.T) {
	for ci, tc := range modelCases() {
		r := testRand(t, uint64(ci))
		d := tc.ds(r, 23)
		var worst float64
		for bname, idx := range batches(d.N) {
			for trial := range 3 {
				x := randomVec(r, tc.model.Dim(), 1)
				g := make([]float64, len(x))
				f := tc.model.Grad(g, x, d, idx)
				if want := tc.model.Loss(x, d, idx); f != want {
					t.Errorf("%s/%s: Grad returned loss %v, Loss gives %v", tc.name, bname, f, want)
				}
				fd := fdGrad(tc.model, x, d, idx)
				e := relErr(g, fd)
				if e > 1e-6 || math.IsNaN(e) {
					t.Errorf("%s/%s trial %d: relative error of Grad vs finite differences %.3g > 1e-6", tc.name, bname, trial, e)
				}
				worst = math.Max(worst, e)
			}
		}
		t.Logf("%s: worst relative error of Grad vs finite differences %.2g", tc.name, worst)
	}
}

func TestNilBatchMeansAllRows(t *testing.T) {
	for ci, tc := range modelCases() {
		r := testRand(t, uint64(ci))
		d := tc.ds(r, 17)
		all := make([]int, d.N)
		for i := range all {
			all[i] = i
		}
		x := randomVec(r, tc.model.Dim(), 1)
		if a, b := tc.model.Loss(x, d, nil), tc.model.Loss(x, d, all); a != b {
			t.Errorf("%s: Loss(nil)=%v, Loss(all rows)=%v", tc.name, a, b)
		}
		ga := make([]float64, len(x))
		gb := make([]float64, len(x))
		tc.model.Grad(ga, x, d, nil)
		tc.model.Grad(gb, x, d, all)
		if !slices.Equal(ga, gb) {
			t.Errorf("%s: Grad(nil) != Grad(all rows)", tc.name)
		}
		if a, b := tc.model.Accuracy(x, d, nil), tc.model.Accuracy(x, d, all); a != b {
			t.Errorf("%s: Accuracy(nil)=%v, Accuracy(all rows)=%v", tc.name, a, b)
		}
	}
}

func TestBatchIsMeanOfRows(t *testing.T) {
	// The loss of a batch minus the regularizer is the mean of the one-row
	// losses minus theirs: checks the 1/|batch| scaling, not just the shape.
	for ci, tc := range modelCases() {
		r := testRand(t, uint64(ci))
		d := tc.ds(r, 9)
		x := randomVec(r, tc.model.Dim(), 1)
		reg := tc.model.Loss(x, d, []int{0}) - rowCE(tc.model, x, d, 0)
		idx := []int{2, 4, 4, 8}
		var sum float64
		for _, i := range idx {
			sum += tc.model.Loss(x, d, []int{i}) - reg
		}
		got := tc.model.Loss(x, d, idx) - reg
		if math.Abs(got-sum/float64(len(idx))) > 1e-12*math.Abs(got) {
			t.Errorf("%s: batch loss %v, mean of row losses %v", tc.name, got, sum/float64(len(idx)))
		}
	}
}

// rowCE returns the unregularized loss of row i, from a zero-L2 clone built
// by the test (models do not expose their regularizer).
func rowCE(m Model[float64], x []float64, d *datasets.Dataset, i int) float64 {
	switch m := m.(type) {
	case *Net[float64]:
		c := m.Clone().(*Net[float64])
		c.l2 = 0
		return c.Loss(x, d, []int{i})
	}
	panic("rowCE: unknown model")
}

func TestGradDoesNotAllocate(t *testing.T) {
	for ci, tc := range modelCases() {
		r := testRand(t, uint64(ci))
		d := tc.ds(r, 40)
		x := randomVec(r, tc.model.Dim(), 1)
		g := make([]float64, len(x))
		for bname, idx := range batches(d.N) {
			if n := testing.AllocsPerRun(20, func() { tc.model.Grad(g, x, d, idx) }); n != 0 {
				t.Errorf("%s/%s: Grad allocates %v times per call", tc.name, bname, n)
			}
			if n := testing.AllocsPerRun(20, func() { tc.model.Loss(x, d, idx) }); n != 0 {
				t.Errorf("%s/%s: Loss allocates %v times per call", tc.name, bname, n)
			}
			if n := testing.AllocsPerRun(20, func() { tc.model.Accuracy(x, d, idx) }); n != 0 {
				t.Errorf("%s/%s: Accuracy allocates %v times per call", tc.name, bname, n)
			}
		}
	}
}

func TestCloneIsIndependent(t *testing.T) {
	// Clones run concurrently on the same data and parameters must agree
	// bit for bit with the original; under -race this also shows they share
	// no scratch.
	for ci, tc := range modelCases() {
		r := testRand(t, uint64(ci))
		d := tc.ds(r, 31)
		x := randomVec(r, tc.model.Dim(), 1)
		want := make([]float64, len(x))
		wantF := tc.model.Grad(want, x, d, nil)
		var wg sync.WaitGroup
		got := make([][]float64, 4)
		gotF := make([]float64, 4)
		for k := range got {
			got[k] = make([]float64, len(x))
			m := tc.model.Clone()
			if m.Dim() != tc.model.Dim() {
				t.Fatalf("%s: clone has Dim %d, want %d", tc.name, m.Dim(), tc.model.Dim())
			}
			wg.Go(func() {
				for range 10 {
					gotF[k] = m.Grad(got[k], x, d, nil)
				}
			})
		}
		wg.Wait()
		for k := range got {
			if gotF[k] != wantF || !slices.Equal(got[k], want) {
				t.Errorf("%s: clone %d disagrees with the original", tc.name, k)
			}
		}
	}
}

func TestInit(t *testing.T) {
	for ci, tc := range modelCases() {
		a := make([]float64, tc.model.Dim())
		b := make([]float64, tc.model.Dim())
		tc.model.Init(a, testRand(t, uint64(ci)))
		tc.model.Init(b, testRand(t, uint64(ci)))
		if !slices.Equal(a, b) {
			t.Errorf("%s: Init is not a function of the stream", tc.name)
		}
		if sumSquares(a) == 0 {
			t.Errorf("%s: Init left all parameters zero", tc.name)
		}
		for _, v := range a {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: Init wrote %v", tc.name, v)
			}
		}
	}
}

// mustPanic fails t unless f panics with a message containing want.
func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		v := recover()
		if v == nil {
			t.Errorf("%s: no panic", name)
			return
		}
		if s, ok := v.(string); !ok || !strings.Contains(s, want) {
			t.Errorf("%s: panic %q, want it to mention %q", name, v, want)
		}
	}()
	f()
}

func TestDimensionMismatchPanics(t *testing.T) {
	for ci, tc := range modelCases() {
		r := testRand(t, uint64(ci))
		m := tc.model
		d := tc.ds(r, 5)
		x := make([]float64, m.Dim())
		g := make([]float64, m.Dim())
		mustPanic(t, tc.name+" short x", "len(x)", func() { m.Loss(x[1:], d, nil) })
		mustPanic(t, tc.name+" short dst", "len(dst)", func() { m.Grad(g[1:], x, d, nil) })
		mustPanic(t, tc.name+" short Init dst", "len(dst)", func() { m.Init(g[1:], r) })
		wrongD := &datasets.Dataset{X: make([]float64, 5*(d.D+1)), Y: make([]int, 5), N: 5, D: d.D + 1, C: d.C}
		mustPanic(t, tc.name+" wrong D", "model wants", func() { m.Grad(g, x, wrongD, nil) })
		broken := *d
		broken.N++
		mustPanic(t, tc.name+" inconsistent Dataset", "len(X)", func() { m.Loss(x, &broken, nil) })
		mustPanic(t, tc.name+" index", "out of range", func() { m.Grad(g, x, d, []int{0, d.N}) })
		mustPanic(t, tc.name+" negative index", "out of range", func() { m.Accuracy(x, d, []int{-1}) })
		mustPanic(t, tc.name+" empty batch", "empty minibatch", func() { m.Loss(x, d, []int{}) })
		badLabel := *d
		badLabel.Y = slices.Clone(d.Y)
		badLabel.Y[2] = d.C
		mustPanic(t, tc.name+" label", "label Y[2]", func() { m.Grad(g, x, &badLabel, nil) })
	}
}

func TestConstructorsPanic(t *testing.T) {
	mustPanic(t, "Softmax features", "features", func() { NewSoftmax[float64](0, 3, 0) })
	mustPanic(t, "Softmax classes", "classes", func() { NewSoftmax[float64](3, 1, 0) })
	mustPanic(t, "Softmax negative l2", "l2", func() { NewSoftmax[float64](3, 3, -1) })
	mustPanic(t, "Softmax NaN l2", "l2", func() { NewSoftmax[float64](3, 3, math.NaN()) })
	mustPanic(t, "Logistic features", "features", func() { NewLogistic[float64](0, 0) })
	mustPanic(t, "Logistic Inf l2", "l2", func() { NewLogistic[float64](2, math.Inf(1)) })
	mustPanic(t, "MLP hidden", "hidden", func() { NewMLP[float64](3, 0, 2, 0) })
	mustPanic(t, "MLP classes", "classes", func() { NewMLP[float64](3, 2, 1, 0) })
	mustPanic(t, "MLP l2", "l2", func() { NewMLP[float64](3, 2, 2, -0.5) })
}

func TestSoftmaxHugeLogitsStayFinite(t *testing.T) {
	// Logits of ±1e4 overflow a naive exp; log-sum-exp must keep the loss
	// and gradient finite and the loss equal to the margin by which the
	// label loses.
	m := NewSoftmax[float64](1, 2, 0)
	d := &datasets.Dataset{X: []float64{1}, Y: []int{0}, N: 1, D: 1, C: 2}
	x := []float64{-1e4, 1e4, 0, 0} // z = (−1e4, 1e4)
	g := make([]float64, 4)
	f := m.Grad(g, x, d, nil)
	if f != 2e4 {
		t.Errorf("loss %v, want 2e4", f)
	}
	want := []float64{-1, 1, -1, 1}
	if !slices.Equal(g, want) {
		t.Errorf("grad %v, want %v", g, want)
	}
}

func TestSoftmaxRegularizerCoversBias(t *testing.T) {
	// With no data signal (all-zero features, balanced labels) the gradient at
	// x is exactly L2·x for W, and L2·x + (p − ȳ) for c; at c = 0 the softmax
	// is uniform and matches the balanced labels, so ∇f = L2·x everywhere.
	m := NewSoftmax[float64](2, 2, 0.5)
	d := &datasets.Dataset{X: make([]float64, 4), Y: []int{0, 1}, N: 2, D: 2, C: 2}
	x := []float64{1, 2, 3, 4, 0, 0}
	g := make([]float64, 6)
	m.Grad(g, x, d, nil)
	want := []float64{0.5, 1, 1.5, 2, 0, 0}
	if relErr(g, want) > 1e-15 {
		t.Errorf("grad %v, want %v", g, want)
	}
	x[4], x[5] = 1, 1 // equal biases keep the softmax uniform
	m.Grad(g, x, d, nil)
	if g[4] != 0.5 || g[5] != 0.5 {
		t.Errorf("bias grad %v, want L2·c = [0.5 0.5]", g[4:])
	}
}

func TestSoftmaxLearnsSeparableData(t *testing.T) {
	ds, err := datasets.Synthetic(datasets.SyntheticSpec{
		Clients: 2, Classes: 4, Features: 10,
		Train: 200, Val: 10, Test: 200,
		Alpha: 100, Separation: 3, Shift: 0, Noise: 1,
	}, 7)
	if err != nil {
		t.Fatal(err)
	}
	train := datasets.Pool(ds[0].Train, ds[1].Train)
	test := datasets.Pool(ds[0].Test, ds[1].Test)
	m := NewSoftmax[float64](10, 4, 1e-3)
	x := make([]float64, m.Dim())
	g := make([]float64, m.Dim())
	first := m.Loss(x, train, nil)
	var last float64
	for range 300 {
		last = m.Grad(g, x, train, nil)
		for i := range x {
			x[i] -= 0.5 * g[i]
		}
	}
	if !(last < 0.5*first) {
		t.Errorf("gradient descent: loss %v → %v, want it at least halved", first, last)
	}
	if acc := m.Accuracy(x, test, nil); acc < 0.9 {
		t.Errorf("test accuracy %v after training, want >= 0.9", acc)
	}
	if acc := m.Accuracy(make([]float64, m.Dim()), test, nil); acc > 0.5 {
		t.Errorf("accuracy of all-zero parameters %v: ties must go to class 0, so about 1/4", acc)
	}
}
