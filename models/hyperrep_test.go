package models

import (
	"hgpsim/internal/vec"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestHyperRepProducts checks every exact product of HyperRep against
// central finite differences, for ReLU and tanh, with and without the
// released code's options (dropout under a fixed mask, the norm penalty).
func TestHyperRepProducts(t *testing.T) {
	names := []string{"", "-dropout", "-norm", "-dropout-norm"}
	opts := []HyperRepOptions{{}, {Dropout: 0.5}, {NormPenalty: true}, {Dropout: 0.3, NormPenalty: true}}
	for _, relu := range []bool{true, false} {
		for k, o := range opts {
			testHyperRepProducts(t, relu, names[k], o)
		}
	}
}

func testHyperRepProducts(t *testing.T, relu bool, optName string, o HyperRepOptions) {
	{
		name := "tanh"
		if relu {
			name = "relu"
		}
		t.Run(name+optName, func(t *testing.T) {
			const D, H, C = 5, 4, 3
			r := testRand(t, 91)
			m := NewHyperRepWith[float64](D, H, C, 0.05, relu, o)
			m.SetMask(12345, true)
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
			c.(Dropout).SetMask(12345, true)
			if a, b := c.InnerLoss(x, lam, d, nil), m.InnerLoss(x, lam, d, nil); a != b {
				t.Errorf("clone: loss %v, original %v", a, b)
			}
		})
	}
}

// TestHyperRepSizes checks the papers' parameter counts.
func TestHyperRepSizes(t *testing.T) {
	m := NewHyperRep[float64](784, 200, 10, 1e-3, true)
	if m.DimLambda() != 157000 || m.DimX() != 2010 {
		t.Errorf("d_λ = %d, d_x = %d, want 157000 and 2010", m.DimLambda(), m.DimX())
	}
}

// TestHyperRepDropoutMask checks the mask: a function of the key (same key,
// same products; another key, others), of the batch position and not of how
// the batch is chunked, dropping about p of the features, and off (or at p
// = 0) the model without dropout bit for bit.
func TestHyperRepDropoutMask(t *testing.T) {
	const D, H, C = 6, 50, 4
	r := testRand(t, 7)
	plain := NewHyperRep[float64](D, H, C, 0.01, true)
	m := NewHyperRepWith[float64](D, H, C, 0.01, true, HyperRepOptions{Dropout: 0.5})
	n := 3*batchChunk + 5 // several chunks
	d := randomData(r, n, D, C)
	x := randomVec(r, m.DimX(), 0.5)
	lam := make([]float64, m.DimLambda())
	m.InitLambda(lam, r)
	g0, g1 := make([]float64, m.DimX()), make([]float64, m.DimX())
	plain.InnerGrad(g0, x, lam, d, nil)
	m.SetMask(99, false)
	m.InnerGrad(g1, x, lam, d, nil)
	if !floats.Equal(g0, g1) {
		t.Error("mask off: gradient differs from the model without dropout")
	}
	m.SetMask(99, true)
	a := m.InnerGrad(g1, x, lam, d, nil)
	if b := m.InnerGrad(g0, x, lam, d, nil); a != b || !floats.Equal(g0, g1) {
		t.Error("same key: products differ")
	}
	if b := m.Clone().InnerLoss(x, lam, d, nil); b == a {
		t.Error("a clone starts with masking off, but gave the masked loss")
	}
	m.SetMask(100, true)
	if b := m.InnerGrad(g0, x, lam, d, nil); b == a {
		t.Error("another key gave the same loss")
	}
	// A naive loop over the rows, position k masked by keepFactor(k, ·),
	// gives the chunked products' loss: the mask follows the position, not
	// the chunk.
	var naive float64
	for k := range n {
		a := d.X[k*D : (k+1)*D]
		z := make([]float64, C)
		copy(z, x[C*H:])
		for q := range H {
			s := lam[H*D+q]
			for j := range D {
				s += lam[q*D+j] * a[j]
			}
			h := max(s, 0) * m.keepFactor(k, q)
			for c := range C {
				z[c] += x[c*H+q] * h
			}
		}
		naive += vec.LogSumExp(z) - z[d.Y[k]]
	}
	naive = naive/float64(n) + 0.005*sumSquares(x)
	if got := m.InnerLoss(x, lam, d, nil); math.Abs(got-naive) > 1e-12*math.Abs(naive) {
		t.Errorf("masked loss %v, naive loop %v", got, naive)
	}
	dropped := 0
	for k := range n {
		for q := range H {
			if m.keepFactor(k, q) == 0 {
				dropped++
			}
		}
	}
	if f := float64(dropped) / float64(n*H); math.Abs(f-0.5) > 0.03 {
		t.Errorf("dropped fraction %.3f, want 0.5", f)
	}
}
