package models

import (
	"hgpsim/datasets"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// bilevelCase is one Bilevel problem under test with a dataset that fits it.
type bilevelCase struct {
	name string
	b    Bilevel[float64]
	ds   func(r *rand.Rand, n int) *datasets.Dataset
}

// bilevelCases returns every Bilevel construction of the package, small
// enough for coordinate-wise finite differences.
func bilevelCases() []bilevelCase {
	ds := func(d, c int) func(r *rand.Rand, n int) *datasets.Dataset {
		return func(r *rand.Rand, n int) *datasets.Dataset { return randomData(r, n, d, c) }
	}
	return []bilevelCase{
		{"Plain/Softmax", Plain(NewSoftmax[float64](7, 4, 0.1)), ds(7, 4)},
		{"Plain/Logistic", Plain(NewLogistic[float64](6, 0.1)), ds(6, 2)},
		{"Plain/MLP", Plain(NewMLP[float64](7, 5, 4, 0.01)), ds(7, 4)},
		{"LabelWeights/Softmax", LabelWeights(NewSoftmax[float64](7, 4, 0.1), 0.3), ds(7, 4)},
		{"LabelWeights/Logistic", LabelWeights(NewLogistic[float64](6, 0.1), 0.3), ds(6, 2)},
		{"LabelWeights/MLP", LabelWeights(NewMLP[float64](7, 5, 4, 0.01), 0.3), ds(7, 4)},
		{"Ensemble/Softmax+MLP+MLP", Ensemble([]Classifier[float64]{NewSoftmax[float64](7, 4, 0.1), NewMLP[float64](7, 5, 4, 0.01), NewMLP[float64](7, 3, 4, 0.02)}, 0.3), ds(7, 4)},
		{"Ensemble/Logistic×2", Ensemble([]Classifier[float64]{NewLogistic[float64](6, 0.1), NewLogistic[float64](6, 0.05)}, 0.3), ds(6, 2)},
		{"Ensemble/MLP×1", Ensemble([]Classifier[float64]{NewMLP[float64](7, 5, 4, 0.01)}, 0.3), ds(7, 4)},
		{"MTLDA/Softmax+MLP", MTLDA([]Classifier[float64]{NewSoftmax[float64](7, 4, 0.1), NewMLP[float64](7, 5, 4, 0.01)}, 0.3, 0.7), ds(7, 4)},
		{"MTLDA/Logistic×3", MTLDA([]Classifier[float64]{NewLogistic[float64](6, 0.1), NewLogistic[float64](6, 0.1), NewLogistic[float64](6, 0.1)}, 0.3, 0.7), ds(6, 2)},
		{"Plain/CNN", Plain(smallCNN(0.01)), ds(16, 4)},
		{"LabelWeights/CNN", LabelWeights(smallCNN(0.01), 0.3), ds(16, 4)},
		{"Ensemble/CNN+Softmax", Ensemble([]Classifier[float64]{smallCNN(0.01), NewSoftmax[float64](16, 4, 0.1)}, 0.3), ds(16, 4)},
		{"MTLDA/CNN×2", MTLDA([]Classifier[float64]{smallCNN(0.01), smallCNN(0.02)}, 0.3, 0.7), ds(16, 4)},
		{"HyperRep cut/2", smallHyperRep(false, 2, 0.05), ds(25, 3)},
		{"HyperRep cut/1", smallHyperRep(false, 1, 0.05), ds(25, 3)},
	}
}

// fdStep is the step of the central finite differences the bilevel tests
// compare against.
const fdStep = 1e-5

// fdInnerGrad returns the finite-difference gradient in x of InnerLoss.
func fdInnerGrad(b Bilevel[float64], x, lambda []float64, d *datasets.Dataset, idx []int) []float64 {
	g := make([]float64, len(x))
	xp := append([]float64(nil), x...)
	for i := range x {
		xp[i] = x[i] + fdStep
		fp := b.InnerLoss(xp, lambda, d, idx)
		xp[i] = x[i] - fdStep
		fm := b.InnerLoss(xp, lambda, d, idx)
		xp[i] = x[i]
		g[i] = (fp - fm) / (2 * fdStep)
	}
	return g
}

// fdInnerHVP returns the finite difference of InnerGrad along u.
func fdInnerHVP(b Bilevel[float64], x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) []float64 {
	xp := make([]float64, len(x))
	xm := make([]float64, len(x))
	for i := range x {
		xp[i] = x[i] + fdStep*u[i]
		xm[i] = x[i] - fdStep*u[i]
	}
	gp := make([]float64, len(x))
	gm := make([]float64, len(x))
	b.InnerGrad(gp, xp, lambda, d, idx)
	b.InnerGrad(gm, xm, lambda, d, idx)
	for i := range gp {
		gp[i] = (gp[i] - gm[i]) / (2 * fdStep)
	}
	return gp
}

// fdInnerCross returns the finite-difference gradient in λ of
// ⟨InnerGrad(x, λ), u⟩.
func fdInnerCross(b Bilevel[float64], x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) []float64 {
	g := make([]float64, len(x))
	at := func(l []float64) float64 {
		b.InnerGrad(g, x, l, d, idx)
		return dot(g, u)
	}
	out := make([]float64, len(lambda))
	lp := append([]float64(nil), lambda...)
	for j := range lambda {
		lp[j] = lambda[j] + fdStep
		fp := at(lp)
		lp[j] = lambda[j] - fdStep
		fm := at(lp)
		lp[j] = lambda[j]
		out[j] = (fp - fm) / (2 * fdStep)
	}
	return out
}

// outerValue returns F(x, λ), the value OuterGrad returns.
func outerValue(b Bilevel[float64], x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	return b.OuterGrad(make([]float64, b.DimX()), make([]float64, b.DimLambda()), x, lambda, d, idx)
}

// fdOuterGrad returns the finite-difference gradients of F in x and in λ.
func fdOuterGrad(b Bilevel[float64], x, lambda []float64, d *datasets.Dataset, idx []int) (gx, gl []float64) {
	fd := func(v []float64, f func() float64) []float64 {
		g := make([]float64, len(v))
		for i := range v {
			vi := v[i]
			v[i] = vi + fdStep
			fp := f()
			v[i] = vi - fdStep
			fm := f()
			v[i] = vi
			g[i] = (fp - fm) / (2 * fdStep)
		}
		return g
	}
	xc := append([]float64(nil), x...)
	lc := append([]float64(nil), lambda...)
	f := func() float64 { return outerValue(b, xc, lc, d, idx) }
	return fd(xc, f), fd(lc, f)
}

// checkRel reports a relative error above 1e-6 (or NaN) and returns it.
func checkRel(t *testing.T, what string, got, want []float64) float64 {
	t.Helper()
	e := relErr(got, want)
	if e > 1e-6 || math.IsNaN(e) {
		t.Errorf("%s: relative error vs finite differences %.3g > 1e-6", what, e)
	}
	return e
}

func TestBilevelMatchesFiniteDifferences(t *testing.T) {
	for ci, tc := range bilevelCases() {
		b := tc.b
		r := testRand(t, 500+uint64(ci))
		d := tc.ds(r, 23)
		nx, nl := b.DimX(), b.DimLambda()
		var worst float64
		for bname, idx := range batches(d.N) {
			for range 2 {
				what := tc.name + "/" + bname
				x := randomVec(r, nx, 1)
				lambda := randomVec(r, nl, 1)
				u := randomVec(r, nx, 1)

				g := make([]float64, nx)
				f := b.InnerGrad(g, x, lambda, d, idx)
				if want := b.InnerLoss(x, lambda, d, idx); math.Abs(f-want) > 1e-14*math.Abs(want) {
					t.Errorf("%s: InnerGrad returned %v, InnerLoss gives %v", what, f, want)
				}
				worst = math.Max(worst, checkRel(t, what+" InnerGrad", g, fdInnerGrad(b, x, lambda, d, idx)))

				hu := make([]float64, nx)
				b.InnerHVP(hu, x, lambda, d, idx, u)
				worst = math.Max(worst, checkRel(t, what+" InnerHVP", hu, fdInnerHVP(b, x, lambda, d, idx, u)))

				cross := make([]float64, nl)
				b.InnerCross(cross, x, lambda, d, idx, u)
				worst = math.Max(worst, checkRel(t, what+" InnerCross", cross, fdInnerCross(b, x, lambda, d, idx, u)))

				gx, gl := make([]float64, nx), make([]float64, nl)
				b.OuterGrad(gx, gl, x, lambda, d, idx)
				fx, fl := fdOuterGrad(b, x, lambda, d, idx)
				worst = math.Max(worst, checkRel(t, what+" OuterGrad x", gx, fx))
				worst = math.Max(worst, checkRel(t, what+" OuterGrad λ", gl, fl))
			}
		}
		t.Logf("%s: worst relative error vs finite differences %.2g", tc.name, worst)
	}
}

func TestBilevelDoesNotAllocate(t *testing.T) {
	for ci, tc := range bilevelCases() {
		b := tc.b
		r := testRand(t, 600+uint64(ci))
		d := tc.ds(r, 40)
		nx, nl := b.DimX(), b.DimLambda()
		x, lambda, u := randomVec(r, nx, 1), randomVec(r, nl, 1), randomVec(r, nx, 1)
		gx, gl := make([]float64, nx), make([]float64, nl)
		for bname, idx := range batches(d.N) {
			for name, f := range map[string]func(){
				"InnerLoss":  func() { b.InnerLoss(x, lambda, d, idx) },
				"InnerGrad":  func() { b.InnerGrad(gx, x, lambda, d, idx) },
				"InnerHVP":   func() { b.InnerHVP(gx, x, lambda, d, idx, u) },
				"InnerCross": func() { b.InnerCross(gl, x, lambda, d, idx, u) },
				"OuterGrad":  func() { b.OuterGrad(gx, gl, x, lambda, d, idx) },
				"Accuracy":   func() { b.Accuracy(x, lambda, d, idx) },
			} {
				if n := testing.AllocsPerRun(10, f); n != 0 {
					t.Errorf("%s/%s: %s allocates %v times per call", tc.name, bname, name, n)
				}
			}
		}
	}
}

func TestBilevelCloneAgrees(t *testing.T) {
	for ci, tc := range bilevelCases() {
		b, c := tc.b, tc.b.Clone()
		r := testRand(t, 700+uint64(ci))
		d := tc.ds(r, 15)
		if c.DimX() != b.DimX() || c.DimLambda() != b.DimLambda() {
			t.Fatalf("%s: clone has dims (%d, %d), want (%d, %d)", tc.name, c.DimX(), c.DimLambda(), b.DimX(), b.DimLambda())
		}
		x, lambda, u := randomVec(r, b.DimX(), 1), randomVec(r, b.DimLambda(), 1), randomVec(r, b.DimX(), 1)
		hb, hc := make([]float64, b.DimX()), make([]float64, b.DimX())
		b.InnerHVP(hb, x, lambda, d, nil, u)
		c.InnerHVP(hc, x, lambda, d, nil, u)
		if relErr(hb, hc) != 0 || b.Accuracy(x, lambda, d, nil) != c.Accuracy(x, lambda, d, nil) {
			t.Errorf("%s: clone disagrees with the original", tc.name)
		}
	}
}

func TestPlainIsTheWrappedModel(t *testing.T) {
	for ci, tc := range secondOrderCases(t) {
		m := tc.model.(SecondOrder[float64])
		b := Plain(m)
		r := testRand(t, 800+uint64(ci))
		d := tc.ds(r, 19)
		idx := []int{4, 1, 1, 7}
		x, u := randomVec(r, m.Dim(), 1), randomVec(r, m.Dim(), 1)
		if b.DimX() != m.Dim() || b.DimLambda() != 0 {
			t.Errorf("%s: Plain has dims (%d, %d), want (%d, 0)", tc.name, b.DimX(), b.DimLambda(), m.Dim())
		}
		if got, want := b.InnerLoss(x, nil, d, idx), m.Loss(x, d, idx); got != want {
			t.Errorf("%s: InnerLoss %v, Loss %v", tc.name, got, want)
		}
		g1, g2 := make([]float64, m.Dim()), make([]float64, m.Dim())
		f1 := b.InnerGrad(g1, x, nil, d, idx)
		f2 := m.Grad(g2, x, d, idx)
		if f1 != f2 || relErr(g1, g2) != 0 {
			t.Errorf("%s: InnerGrad differs from Grad", tc.name)
		}
		f1 = b.OuterGrad(g1, nil, x, nil, d, idx)
		if f1 != f2 || relErr(g1, g2) != 0 {
			t.Errorf("%s: OuterGrad differs from Grad", tc.name)
		}
		b.InnerHVP(g1, x, nil, d, idx, u)
		m.HVP(g2, x, d, idx, u)
		if relErr(g1, g2) != 0 {
			t.Errorf("%s: InnerHVP differs from HVP", tc.name)
		}
		if got, want := b.Accuracy(x, nil, d, idx), m.Accuracy(x, d, idx); got != want {
			t.Errorf("%s: Accuracy %v, want %v", tc.name, got, want)
		}
		b.InnerCross(nil, x, nil, d, idx, u)
		mustPanic(t, tc.name+" λ", "len(lambda)", func() { b.InnerLoss(x, []float64{1}, d, idx) })
		mustPanic(t, tc.name+" cross dst", "len(dst)", func() { b.InnerCross([]float64{0}, x, nil, d, idx, u) })
	}
}

// classifierCases returns every model under test as a Classifier.
func classifierCases(t *testing.T) []modelCase {
	cases := modelCases()
	for _, tc := range cases {
		if _, ok := tc.model.(Classifier[float64]); !ok {
			t.Fatalf("%s does not implement Classifier[float64]", tc.name)
		}
	}
	return cases
}

// unregularized returns a copy of m with L2 = 0: its Loss is the mean
// cross-entropy alone.
func unregularized(m Classifier[float64]) Classifier[float64] {
	switch m := m.(type) {
	case *Net[float64]:
		c := m.Clone().(*Net[float64])
		c.l2 = 0
		return c
	}
	panic("unregularized: unknown model")
}

// agree reports unless got and want agree to a relative 1e-12.
func agree(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if e := relErr(got, want); e > 1e-12 || math.IsNaN(e) {
		t.Errorf("%s: relative difference %.3g > 1e-12", what, e)
	}
}

// agreeVal is agree for one number.
func agreeVal(t *testing.T, what string, got, want float64) {
	t.Helper()
	agree(t, what, []float64{got}, []float64{want})
}

// checkIsBase checks that b at lambda is the single-level problem of m:
// the inner cost is m's loss, the outer cost m's mean cross-entropy plus
// outerL2λ, and f does not depend on λ.
func checkIsBase(t *testing.T, name string, b Bilevel[float64], m Classifier[float64], lambda []float64, outerL2 float64, d *datasets.Dataset, r *rand.Rand) {
	t.Helper()
	idx := []int{2, 0, 0, 9, 5}
	n := m.Dim()
	x, u := randomVec(r, n, 1), randomVec(r, n, 1)
	agreeVal(t, name+" InnerLoss", b.InnerLoss(x, lambda, d, idx), m.Loss(x, d, idx))
	g1, g2 := make([]float64, n), make([]float64, n)
	f1 := b.InnerGrad(g1, x, lambda, d, idx)
	f2 := m.Grad(g2, x, d, idx)
	agreeVal(t, name+" InnerGrad value", f1, f2)
	agree(t, name+" InnerGrad", g1, g2)
	b.InnerHVP(g1, x, lambda, d, idx, u)
	m.HVP(g2, x, d, idx, u)
	agree(t, name+" InnerHVP", g1, g2)
	if got, want := b.Accuracy(x, lambda, d, nil), m.Accuracy(x, d, nil); got != want {
		t.Errorf("%s: Accuracy %v, want %v", name, got, want)
	}
	ce := unregularized(m)
	gl := make([]float64, len(lambda))
	f1 = b.OuterGrad(g1, gl, x, lambda, d, idx)
	f2 = ce.Grad(g2, x, d, idx)
	agreeVal(t, name+" OuterGrad value", f1, f2+0.5*outerL2*sumSquares(lambda))
	agree(t, name+" OuterGrad x", g1, g2)
	want := make([]float64, len(lambda))
	floats.AddScaled(want, outerL2, lambda)
	agree(t, name+" OuterGrad λ", gl, want)
}

func TestLabelWeightsAtZeroIsTheModel(t *testing.T) {
	for ci, tc := range classifierCases(t) {
		m := tc.model.(Classifier[float64])
		_, C := m.shape()
		b := LabelWeights(m, 0.25)
		r := testRand(t, 900+uint64(ci))
		checkIsBase(t, "LabelWeights/"+tc.name, b, m, make([]float64, C), 0.25, tc.ds(r, 19), r)
	}
}

func TestLabelWeightsWeighRows(t *testing.T) {
	for ci, tc := range classifierCases(t) {
		m := tc.model.(Classifier[float64])
		_, C := m.shape()
		b := LabelWeights(m, 0.25)
		r := testRand(t, 1000+uint64(ci))
		d := tc.ds(r, 19)
		x, lambda := randomVec(r, m.Dim(), 1), randomVec(r, C, 1)
		idx := []int{3, 1, 4, 1, 5, 9, 2, 6}
		// w = C·softmax(λ), computed independently of the package.
		w := make([]float64, C)
		var sum float64
		for c := range w {
			w[c] = math.Exp(lambda[c])
			sum += w[c]
		}
		var want float64
		for _, i := range idx {
			want += float64(C) * w[d.Y[i]] / sum * rowCE(m, x, d, i)
		}
		want = want/float64(len(idx)) + 0.5*m.l2Rate()*sumSquares(x)
		agreeVal(t, tc.name+" weighted InnerLoss", b.InnerLoss(x, lambda, d, idx), want)
	}
}

func TestEnsembleOfOneIsTheModel(t *testing.T) {
	for ci, tc := range classifierCases(t) {
		m := tc.model.(Classifier[float64])
		b := Ensemble([]Classifier[float64]{m}, 0.25)
		r := testRand(t, 1100+uint64(ci))
		d := tc.ds(r, 19)
		lambda := []float64{1.7}
		checkIsBase(t, "Ensemble/"+tc.name, b, m, lambda, 0.25, d, r)
		cross := []float64{1}
		b.InnerCross(cross, randomVec(r, m.Dim(), 1), lambda, d, nil, randomVec(r, m.Dim(), 1))
		if cross[0] != 0 {
			t.Errorf("%s: InnerCross of one model %v, want 0", tc.name, cross[0])
		}
	}
}

// A mixture of K equal models predicts what each of them does, whatever π.
func TestEnsembleOfCopies(t *testing.T) {
	for ci, tc := range classifierCases(t) {
		m := tc.model.(Classifier[float64])
		const K = 3
		b := Ensemble([]Classifier[float64]{m, m, m}, 0.25)
		r := testRand(t, 1200+uint64(ci))
		d := tc.ds(r, 19)
		x1 := randomVec(r, m.Dim(), 1)
		var x []float64
		for range K {
			x = append(x, x1...)
		}
		lambda := randomVec(r, K, 1)
		agreeVal(t, tc.name+" InnerLoss", b.InnerLoss(x, lambda, d, nil),
			unregularized(m).Loss(x1, d, nil)+K*0.5*m.l2Rate()*sumSquares(x1))
		gx, gl := make([]float64, len(x)), make([]float64, K)
		b.OuterGrad(gx, gl, x, lambda, d, nil)
		want := make([]float64, K)
		floats.AddScaled(want, 0.25, lambda) // responsibilities equal π
		agree(t, tc.name+" OuterGrad λ", gl, want)
		if got, want := b.Accuracy(x, lambda, d, nil), m.Accuracy(x1, d, nil); got != want {
			t.Errorf("%s: Accuracy %v, want %v", tc.name, got, want)
		}
	}
}

// MTLDA is Ensemble when λ^C = 0 and LabelWeights with one base.
func TestMTLDAContainsBoth(t *testing.T) {
	r := testRand(t, 1300)
	const D, C = 7, 4
	d := randomData(r, 21, D, C)
	bases := []Classifier[float64]{NewSoftmax[float64](D, C, 0.1), NewMLP[float64](D, 5, C, 0.01)}
	both := MTLDA(bases, 0.3, 0.7)
	ens := Ensemble(bases, 0.3)
	x, u := randomVec(r, ens.DimX(), 1), randomVec(r, ens.DimX(), 1)
	lK := randomVec(r, len(bases), 1)
	lambda := append(append([]float64(nil), lK...), make([]float64, C)...)
	agreeVal(t, "InnerLoss", both.InnerLoss(x, lambda, d, nil), ens.InnerLoss(x, lK, d, nil))
	h1, h2 := make([]float64, len(x)), make([]float64, len(x))
	both.InnerHVP(h1, x, lambda, d, nil, u)
	ens.InnerHVP(h2, x, lK, d, nil, u)
	agree(t, "InnerHVP", h1, h2)
	c1, c2 := make([]float64, len(lambda)), make([]float64, len(lK))
	both.InnerCross(c1, x, lambda, d, nil, u)
	ens.InnerCross(c2, x, lK, d, nil, u)
	agree(t, "InnerCross λ^K", c1[:len(lK)], c2)

	one := MTLDA(bases[1:], 0.3, 0.7)
	lw := LabelWeights(bases[1], 0.7)
	x1, u1 := x[bases[0].Dim():], u[bases[0].Dim():]
	lC := randomVec(r, C, 1)
	lambda = append([]float64{2.5}, lC...)
	agreeVal(t, "one base InnerLoss", one.InnerLoss(x1, lambda, d, nil), lw.InnerLoss(x1, lC, d, nil))
	c1, c2 = make([]float64, 1+C), make([]float64, C)
	one.InnerCross(c1, x1, lambda, d, nil, u1)
	lw.InnerCross(c2, x1, lC, d, nil, u1)
	agree(t, "one base InnerCross λ^C", c1[1:], c2)
	g1, g2 := make([]float64, len(x1)), make([]float64, len(x1))
	gl1, gl2 := make([]float64, 1+C), make([]float64, C)
	f1 := one.OuterGrad(g1, gl1, x1, lambda, d, nil)
	f2 := lw.OuterGrad(g2, gl2, x1, lC, d, nil)
	agreeVal(t, "one base F", f1, f2+0.5*0.3*2.5*2.5)
	agree(t, "one base ∂ₓF", g1, g2)
	agree(t, "one base ∂_λ^C F", gl1[1:], gl2)
}

func TestBilevelPanics(t *testing.T) {
	mustPanic(t, "no bases", "no base", func() { Ensemble[float64](nil, 0) })
	mustPanic(t, "shape", "base model 1", func() {
		Ensemble([]Classifier[float64]{NewSoftmax[float64](3, 4, 0), NewSoftmax[float64](3, 5, 0)}, 0)
	})
	mustPanic(t, "outerL2", "outerL2", func() { LabelWeights(NewSoftmax[float64](3, 4, 0), -1) })
	mustPanic(t, "MTLDA outerL2", "outerL2Labels", func() { MTLDA([]Classifier[float64]{NewSoftmax[float64](3, 4, 0)}, 0, math.NaN()) })
	b := MTLDA([]Classifier[float64]{NewSoftmax[float64](3, 4, 0), NewMLP[float64](3, 2, 4, 0)}, 0, 0)
	r := testRand(t, 1400)
	d := randomData(r, 5, 3, 4)
	x := make([]float64, b.DimX())
	lambda := make([]float64, b.DimLambda())
	if b.DimLambda() != 2+4 {
		t.Errorf("MTLDA DimLambda %d, want K+C = 6", b.DimLambda())
	}
	mustPanic(t, "short λ", "len(lambda)", func() { b.InnerLoss(x, lambda[1:], d, nil) })
	mustPanic(t, "short x", "len(x)", func() { b.InnerLoss(x[1:], lambda, d, nil) })
	mustPanic(t, "cross dst", "len(dst)", func() { b.InnerCross(x, x, lambda, d, nil, x) })
	mustPanic(t, "dstLambda", "len(dstLambda)", func() { b.OuterGrad(x, x, x, lambda, d, nil) })
	mustPanic(t, "data", "Dataset", func() { b.InnerLoss(x, lambda, randomData(r, 5, 3, 3), nil) })
	mustPanic(t, "empty", "empty", func() { b.InnerLoss(x, lambda, d, []int{}) })
}
