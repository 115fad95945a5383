package nn

import (
	"slices"
	"testing"
)

// TestInputGradients checks VJPInput's gA against central differences of
// Σ_b ⟨G_b, Z_b⟩ in the inputs, and VJPRInput's rgA against central
// differences of gA along x → x + t·u, G → G + t·RG; and that both leave
// the parameter parts of VJP and VJPR as they were.
func TestInputGradients(t *testing.T) {
	in := Shape{C: 2, H: 4, W: 4}
	for name, specs := range map[string][]Spec{
		"dense": {Dense(6), Tanh(), Dense(5), Softplus(), Dense(3)},
		"conv":  {Conv2D(3, 3, 1, 1), Softplus(), AvgPool2D(2, 2), GroupNorm(3), Tanh(), Dense(3)},
		// Linear given its masks: VJPR alone skips backpropagating G into
		// the first layer, VJPRInput must not.
		"relu": {Flatten(), Dense(6), ReLU(), Dense(5), ReLU(), Dense(3)},
	} {
		const n = 4
		f := newFixture(t, in, specs, 3, n, 41)
		gA := func(x, a, g []float64) []float64 {
			f.net.Logits(f.z, x, a, n)
			dst := make([]float64, f.dim)
			ga := make([]float64, len(a))
			f.net.VJPInput(dst, ga, x, g)
			return ga
		}
		// gA against differences in A.
		f.net.Logits(f.z, f.x, f.a, n)
		dst := make([]float64, f.dim)
		ga := make([]float64, len(f.a))
		f.net.VJPInput(dst, ga, f.x, f.g)
		vjp := make([]float64, f.dim)
		f.net.VJP(vjp, f.x, f.g)
		if !slices.Equal(dst, vjp) {
			t.Errorf("%s: VJPInput's parameter gradient differs from VJP's", name)
		}
		const h = 1e-5
		fd := make([]float64, len(f.a))
		a := slices.Clone(f.a)
		for i := range a {
			a[i] = f.a[i] + h
			zp := slices.Clone(f.logitsAt2(f.x, a))
			a[i] = f.a[i] - h
			zm := f.logitsAt2(f.x, a)
			a[i] = f.a[i]
			fd[i] = (dot(f.g, zp) - dot(f.g, zm)) / (2 * h)
		}
		if e := relErr(ga, fd); e > 1e-7 {
			t.Errorf("%s: VJPInput: relative error %.3g against finite differences", name, e)
		}
		// rgA against differences of gA along (u, RG).
		f.net.Logits(f.z, f.x, f.a, n)
		f.net.JVP(f.v, f.x, f.u)
		rdst := make([]float64, f.dim)
		rga := make([]float64, len(f.a))
		f.net.VJPRInput(rdst, rga, f.x, f.u, f.g, f.rg)
		vjpr := make([]float64, f.dim)
		f.net.VJPR(vjpr, f.x, f.u, f.g, f.rg)
		if !slices.Equal(rdst, vjpr) {
			t.Errorf("%s: VJPRInput's parameter part differs from VJPR's", name)
		}
		gp := gA(shifted(f.x, f.u, h), f.a, shifted(f.g, f.rg, h))
		gm := gA(shifted(f.x, f.u, -h), f.a, shifted(f.g, f.rg, -h))
		for i := range gp {
			gp[i] = (gp[i] - gm[i]) / (2 * h)
		}
		if e := relErr(rga, gp); e > 1e-7 {
			t.Errorf("%s: VJPRInput: relative error %.3g against finite differences", name, e)
		}
		// After a VJPR with the same G (whose backpropagation of G may
		// stop early), VJPRInput gives the same bits as on its own.
		f.net.Logits(f.z, f.x, f.a, n)
		f.net.JVP(f.v, f.x, f.u)
		f.net.VJPR(make([]float64, f.dim), f.x, f.u, f.g, f.rg)
		again := make([]float64, len(f.a))
		f.net.VJPRInput(make([]float64, f.dim), again, f.x, f.u, f.g, f.rg)
		if !slices.Equal(again, rga) {
			t.Errorf("%s: VJPRInput after VJPR differs from VJPRInput alone", name)
		}
	}
}

// logitsAt2 returns the logits at parameters x of inputs a.
func (f *fixture) logitsAt2(x, a []float64) []float64 {
	f.net.Logits(f.z, x, a, f.n)
	return f.z
}
