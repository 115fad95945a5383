package models

import (
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestHyperRepProducts checks every exact product of HyperRep against
// central finite differences, for ReLU and tanh.
func TestHyperRepProducts(t *testing.T) {
	for _, relu := range []bool{true, false} {
		name := "tanh"
		if relu {
			name = "relu"
		}
		t.Run(name, func(t *testing.T) {
			const D, H, C = 5, 4, 3
			r := testRand(t, 91)
			m := NewHyperRep(D, H, C, 0.05, relu)
			d := randomData(r, 9, D, C)
			x := randomVec(r, m.DimX(), 0.7)
			lam := make([]float64, m.DimLambda())
			m.InitLambda(lam, r)
			for i := range lam[H*D:] {
				lam[H*D+i] = 0.3 * r.NormFloat64()
			}
			u := randomVec(r, m.DimX(), 1)
			idx := []int{0, 2, 3, 5, 8, 2}
			const h = 1e-5
			fd := func(v []float64, f func() float64) []float64 {
				g := make([]float64, len(v))
				for i := range v {
					old := v[i]
					v[i] = old + h
					fp := f()
					v[i] = old - h
					fm := f()
					v[i] = old
					g[i] = (fp - fm) / (2 * h)
				}
				return g
			}
			// ∇ₓg.
			gx := make([]float64, m.DimX())
			m.InnerGrad(gx, x, lam, d, idx)
			want := fd(x, func() float64 { return m.InnerLoss(x, lam, d, idx) })
			if e := relErr(gx, want); e > 1e-7 {
				t.Errorf("InnerGrad: relative error %.2e", e)
			}
			// ∇²ₓₓg·u.
			hv := make([]float64, m.DimX())
			m.InnerHVP(hv, x, lam, d, idx, u)
			tmp := make([]float64, m.DimX())
			want = make([]float64, m.DimX())
			xp := append([]float64(nil), x...)
			floats.AddScaledTo(xp, x, h, u)
			m.InnerGrad(want, xp, lam, d, idx)
			floats.AddScaledTo(xp, x, -h, u)
			m.InnerGrad(tmp, xp, lam, d, idx)
			floats.Sub(want, tmp)
			floats.Scale(1/(2*h), want)
			if e := relErr(hv, want); e > 1e-6 {
				t.Errorf("InnerHVP: relative error %.2e", e)
			}
			// (∂_λ∇ₓg)ᵀu.
			cr := make([]float64, m.DimLambda())
			m.InnerCross(cr, x, lam, d, idx, u)
			want = fd(lam, func() float64 {
				m.InnerGrad(tmp, x, lam, d, idx)
				return floats.Dot(tmp, u)
			})
			if e := relErr(cr, want); e > 1e-6 {
				t.Errorf("InnerCross: relative error %.2e", e)
			}
			// ∂ₓf, ∂_λf.
			ox, ol := make([]float64, m.DimX()), make([]float64, m.DimLambda())
			m.OuterGrad(ox, ol, x, lam, d, idx)
			want = fd(x, func() float64 { return m.OuterGrad(nil, nil, x, lam, d, idx) })
			if e := relErr(ox, want); e > 1e-7 {
				t.Errorf("OuterGrad x: relative error %.2e", e)
			}
			want = fd(lam, func() float64 { return m.OuterGrad(nil, nil, x, lam, d, idx) })
			if e := relErr(ol, want); e > 1e-7 {
				t.Errorf("OuterGrad λ: relative error %.2e", e)
			}
			// The clone gives the same values; the cache does not leak.
			c := m.Clone()
			if a, b := c.InnerLoss(x, lam, d, nil), m.InnerLoss(x, lam, d, nil); a != b {
				t.Errorf("clone: loss %v, original %v", a, b)
			}
		})
	}
}

// TestHyperRepSizes checks the papers' parameter counts.
func TestHyperRepSizes(t *testing.T) {
	m := NewHyperRep(784, 200, 10, 1e-3, true)
	if m.DimLambda() != 157000 || m.DimX() != 2010 {
		t.Errorf("d_λ = %d, d_x = %d, want 157000 and 2010", m.DimLambda(), m.DimX())
	}
}
