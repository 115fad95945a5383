package models

import (
	"hgpsim/datasets"
	"math"
	"testing"
)

// secondOrderCases returns every model under test as a SecondOrder.
func secondOrderCases(t *testing.T) []modelCase {
	cases := modelCases()
	for _, tc := range cases {
		if _, ok := tc.model.(SecondOrder[float64]); !ok {
			t.Fatalf("%s does not implement SecondOrder[float64]", tc.name)
		}
	}
	return cases
}

// fdHVP returns the central finite difference of Grad along u.
func fdHVP(m Model[float64], x []float64, d *datasets.Dataset, idx []int, u []float64) []float64 {
	const h = 1e-5
	xp := make([]float64, len(x))
	xm := make([]float64, len(x))
	for i := range x {
		xp[i] = x[i] + h*u[i]
		xm[i] = x[i] - h*u[i]
	}
	gp := make([]float64, len(x))
	gm := make([]float64, len(x))
	m.Grad(gp, xp, d, idx)
	m.Grad(gm, xm, d, idx)
	for i := range gp {
		gp[i] = (gp[i] - gm[i]) / (2 * h)
	}
	return gp
}

func TestHVPMatchesFiniteDifferences(t *testing.T) {
	for ci, tc := range secondOrderCases(t) {
		m := tc.model.(SecondOrder[float64])
		r := testRand(t, 100+uint64(ci))
		d := tc.ds(r, 23)
		var worst float64
		for bname, idx := range batches(d.N) {
			for trial := range 3 {
				x := randomVec(r, m.Dim(), 1)
				u := randomVec(r, m.Dim(), 1)
				hu := make([]float64, m.Dim())
				m.HVP(hu, x, d, idx, u)
				fd := fdHVP(m, x, d, idx, u)
				e := relErr(hu, fd)
				if e > 1e-6 || math.IsNaN(e) {
					t.Errorf("%s/%s trial %d: relative error of HVP vs finite differences %.3g > 1e-6", tc.name, bname, trial, e)
				}
				worst = math.Max(worst, e)
			}
			// Unit directions probe single Hessian columns, where a block
			// that is missing or misplaced cannot hide in a random mix.
			x := randomVec(r, m.Dim(), 1)
			u := make([]float64, m.Dim())
			hu := make([]float64, m.Dim())
			for j := range u {
				clear(u)
				u[j] = 1
				m.HVP(hu, x, d, idx, u)
				e := relErr(hu, fdHVP(m, x, d, idx, u))
				if e > 1e-6 || math.IsNaN(e) {
					t.Errorf("%s/%s: Hessian column %d: relative error %.3g > 1e-6", tc.name, bname, j, e)
				}
				worst = math.Max(worst, e)
			}
		}
		t.Logf("%s: worst relative error of HVP vs finite differences %.2g", tc.name, worst)
	}
}

func TestHVPSymmetric(t *testing.T) {
	for ci, tc := range secondOrderCases(t) {
		m := tc.model.(SecondOrder[float64])
		r := testRand(t, 200+uint64(ci))
		d := tc.ds(r, 19)
		for bname, idx := range batches(d.N) {
			for range 5 {
				x := randomVec(r, m.Dim(), 1)
				u := randomVec(r, m.Dim(), 1)
				v := randomVec(r, m.Dim(), 1)
				hu := make([]float64, m.Dim())
				hv := make([]float64, m.Dim())
				m.HVP(hu, x, d, idx, u)
				m.HVP(hv, x, d, idx, v)
				a, b := dot(v, hu), dot(u, hv)
				scale := math.Sqrt(sumSquares(u)*sumSquares(hv)) + math.Sqrt(sumSquares(v)*sumSquares(hu))
				if math.Abs(a-b) > 1e-13*scale {
					t.Errorf("%s/%s: vᵀHu = %.17g, uᵀHv = %.17g", tc.name, bname, a, b)
				}
			}
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestConvexModelsStronglyConvex(t *testing.T) {
	// uᵀ∇²f u >= L2‖u‖² for every u: the data term is convex and the
	// regularizer covers every parameter, bias included (Assumption 1).
	// The bias direction alone, with all-zero features, makes the data term
	// nearly flat, so a regularizer that skipped the bias would fail here.
	cases := []struct {
		name string
		m    SecondOrder[float64]
		l2   float64
		d    *datasets.Dataset
	}{
		{"Softmax", NewSoftmax[float64](3, 3, 0.25), 0.25, &datasets.Dataset{X: make([]float64, 6), Y: []int{0, 1}, N: 2, D: 3, C: 3}},
		{"Logistic", NewLogistic[float64](3, 0.25), 0.25, &datasets.Dataset{X: make([]float64, 6), Y: []int{0, 1}, N: 2, D: 3, C: 2}},
	}
	for ci, tc := range cases {
		r := testRand(t, 300+uint64(ci))
		x := randomVec(r, tc.m.Dim(), 30) // far out: saturated, ds curvature ≈ 0
		hu := make([]float64, tc.m.Dim())
		for range 20 {
			u := randomVec(r, tc.m.Dim(), 1)
			tc.m.HVP(hu, x, tc.d, nil, u)
			if q, low := dot(u, hu), tc.l2*sumSquares(u); q < low*(1-1e-12) {
				t.Errorf("%s: uᵀHu = %v < L2‖u‖² = %v", tc.name, q, low)
			}
		}
	}
}

func TestHVPDoesNotAllocate(t *testing.T) {
	for ci, tc := range secondOrderCases(t) {
		m := tc.model.(SecondOrder[float64])
		r := testRand(t, uint64(ci))
		d := tc.ds(r, 40)
		x := randomVec(r, m.Dim(), 1)
		u := randomVec(r, m.Dim(), 1)
		hu := make([]float64, m.Dim())
		for bname, idx := range batches(d.N) {
			if n := testing.AllocsPerRun(20, func() { m.HVP(hu, x, d, idx, u) }); n != 0 {
				t.Errorf("%s/%s: HVP allocates %v times per call", tc.name, bname, n)
			}
		}
	}
}

func TestHVPPanics(t *testing.T) {
	for ci, tc := range secondOrderCases(t) {
		m := tc.model.(SecondOrder[float64])
		d := tc.ds(testRand(t, uint64(ci)), 4)
		x := make([]float64, m.Dim())
		mustPanic(t, tc.name+" short u", "len(u)", func() { m.HVP(make([]float64, m.Dim()), x, d, nil, x[1:]) })
		mustPanic(t, tc.name+" short dst", "len(dst)", func() { m.HVP(x[1:], x, d, nil, x) })
	}
}

func TestLogisticLabelsAreBinary(t *testing.T) {
	m := NewLogistic[float64](2, 0)
	d := &datasets.Dataset{X: make([]float64, 2), Y: []int{0}, N: 1, D: 2, C: 3}
	mustPanic(t, "C=3", "C=2", func() { m.Loss(make([]float64, 3), d, nil) })
	// The loss at z = ±40 must be the exact margin, not log(0) or Inf.
	d = &datasets.Dataset{X: []float64{1, 0}, Y: []int{0}, N: 1, D: 2, C: 2}
	x := []float64{800, 0, 0}
	if f := m.Loss(x, d, nil); f != 800 {
		t.Errorf("loss of a wrong confident prediction: %v, want 800", f)
	}
	d.Y[0] = 1
	if f := m.Loss(x, d, nil); f != 0 || math.IsNaN(f) {
		t.Errorf("loss of a right confident prediction: %v, want 0", f)
	}
}

func TestMLPLearnsNonlinearData(t *testing.T) {
	// XOR-like data (label = sign(a₀a₁) > 0) is not linearly separable:
	// Softmax stays near chance, the MLP must not.
	r := testRand(t, 400)
	d := randomData(r, 400, 2, 2)
	for i := range d.N {
		a := d.Row(i)
		d.Y[i] = 0
		if a[0]*a[1] > 0 {
			d.Y[i] = 1
		}
	}
	m := NewMLP[float64](2, 8, 2, 1e-4)
	x := make([]float64, m.Dim())
	m.Init(x, r)
	g := make([]float64, m.Dim())
	for range 2000 {
		m.Grad(g, x, d, nil)
		for i := range x {
			x[i] -= 0.5 * g[i]
		}
	}
	if acc := m.Accuracy(x, d, nil); acc < 0.9 {
		t.Errorf("MLP on XOR: accuracy %v, want >= 0.9", acc)
	}
	lin := NewSoftmax[float64](2, 2, 1e-4)
	xl := make([]float64, lin.Dim())
	gl := make([]float64, lin.Dim())
	for range 500 {
		lin.Grad(gl, xl, d, nil)
		for i := range xl {
			xl[i] -= 0.5 * gl[i]
		}
	}
	if acc := lin.Accuracy(xl, d, nil); acc > 0.75 {
		t.Errorf("Softmax on XOR: accuracy %v; the data is too easy to tell the models apart", acc)
	}
}
