package models

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"hgpsim/models/nn"
)

// The weighted loss's gradient and HVP against finite differences, its
// per-sample directional derivatives against per-sample gradients, and
// λ ≡ 1 against the plain model.
func TestSampleWeightedDerivatives(t *testing.T) {
	r := testRand(t, 41)
	cnn, err := NewNet[float64](nn.Shape{C: 1, H: 1, W: 5}, []nn.Spec{nn.Conv2D(2, 1, 1, 0), nn.Softplus(), nn.Dense(3)}, 3, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Classifier[float64]{NewMLP[float64](5, 4, 3, 1e-3), NewSoftmax[float64](5, 3, 1e-2), cnn} {
		w := NewSampleWeighted[float64](c)
		d := randomData(r, 12, 5, 3)
		x := randomVec(r, w.Dim(), 0.5)
		lambda := make([]float64, d.N)
		for i := range lambda {
			lambda[i] = r.Float64()
		}
		idx := []int{0, 3, 4, 7, 11}
		g := make([]float64, w.Dim())
		w.Grad(g, x, lambda, d, idx)
		fd := make([]float64, w.Dim())
		const h = 1e-5
		xp := append([]float64(nil), x...)
		for k := range x {
			xp[k] = x[k] + h
			a := w.Loss(xp, lambda, d, idx)
			xp[k] = x[k] - h
			b := w.Loss(xp, lambda, d, idx)
			xp[k] = x[k]
			fd[k] = (a - b) / (2 * h)
		}
		if e := relErr(g, fd); e > 1e-7 {
			t.Errorf("%T: gradient off finite differences by %.3g", c, e)
		}
		u := randomVec(r, w.Dim(), 1)
		hv := make([]float64, w.Dim())
		w.HVP(hv, x, lambda, d, idx, u)
		gp, gm := make([]float64, w.Dim()), make([]float64, w.Dim())
		for k := range x {
			xp[k] = x[k] + h*u[k]
		}
		w.Grad(gp, xp, lambda, d, idx)
		for k := range x {
			xp[k] = x[k] - h*u[k]
		}
		w.Grad(gm, xp, lambda, d, idx)
		for k := range fd {
			fd[k] = (gp[k] - gm[k]) / (2 * h)
		}
		if e := relErr(hv, fd); e > 1e-6 {
			t.Errorf("%T: HVP off finite differences by %.3g", c, e)
		}
		dir := make([]float64, len(idx))
		w.SampleDirectional(dir, x, d, idx, u)
		for k, i := range idx {
			w.SampleGrad(g, x, d, i)
			if want := floats.Dot(g, u); math.Abs(dir[k]-want) > 1e-10*(1+math.Abs(want)) {
				t.Errorf("%T: row %d: directional %g, ⟨∇ℓ, u⟩ = %g", c, i, dir[k], want)
			}
		}
		// λ ≡ 1 is the plain loss.
		w.Grad(g, x, nil, d, idx)
		plain := make([]float64, w.Dim())
		c.Grad(plain, x, d, idx)
		if e := relErr(g, plain); e > 1e-12 {
			t.Errorf("%T: λ ≡ 1 differs from the plain gradient by %.3g", c, e)
		}
	}
}

// The hyper-gradient block −(1/N)⟨∇ℓ(ω; s_j), v*⟩, H v* = ∇F, against
// central finite differences of h(λ) = F(ω_λ) on a weighted logistic
// regression (softmax, strongly convex) whose inner problem is solved to
// machine precision by Newton's method with a dense Hessian.
func TestSampleWeightedHypergradient(t *testing.T) {
	r := testRand(t, 42)
	w := NewSampleWeighted[float64](NewSoftmax[float64](3, 3, 0.05))
	train, val := randomData(r, 15, 3, 3), randomData(r, 10, 3, 3)
	dim := w.Dim()
	lambda := make([]float64, train.N)
	for i := range lambda {
		lambda[i] = 0.2 + 0.8*r.Float64()
	}
	hess := func(x, lam []float64) *mat.Dense {
		H := mat.NewDense(dim, dim, nil)
		e, col := make([]float64, dim), make([]float64, dim)
		for k := range dim {
			clear(e)
			e[k] = 1
			w.HVP(col, x, lam, train, nil, e)
			H.SetCol(k, col)
		}
		return H
	}
	solve := func(lam []float64) []float64 {
		x := make([]float64, dim)
		g := make([]float64, dim)
		for range 50 {
			w.Grad(g, x, lam, train, nil)
			var step mat.VecDense
			if err := step.SolveVec(hess(x, lam), mat.NewVecDense(dim, g)); err != nil {
				t.Fatal(err)
			}
			for k := range x {
				x[k] -= step.AtVec(k)
			}
		}
		return x
	}
	outer := func(x []float64) float64 { return w.Loss(x, nil, val, nil) - 0.5*w.L2()*floats.Dot(x, x) }
	x := solve(lambda)
	// ∇F without the regularizer: F is the validation cross-entropy.
	gF := make([]float64, dim)
	w.Grad(gF, x, nil, val, nil)
	floats.AddScaled(gF, -w.L2(), x)
	var v mat.VecDense
	if err := v.SolveVec(hess(x, lambda), mat.NewVecDense(dim, gF)); err != nil {
		t.Fatal(err)
	}
	dir := make([]float64, train.N)
	w.SampleDirectional(dir, x, train, nil, v.RawVector().Data)
	const h = 1e-5
	for j := range train.N {
		got := -dir[j] / float64(train.N)
		lp := append([]float64(nil), lambda...)
		lp[j] += h
		a := outer(solve(lp))
		lp[j] -= 2 * h
		b := outer(solve(lp))
		want := (a - b) / (2 * h)
		if math.Abs(got-want) > 1e-7+1e-5*math.Abs(want) {
			t.Errorf("∂h/∂λ_%d = %.10g, finite differences %.10g", j, got, want)
		}
	}
}
