package optim

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"hgpsim/internal/rng"
)

// randomMixes returns n receivers' mixes of deg senders' vectors of
// length d (plus a second, shorter mix per receiver), as HGP and VR-HGP
// make them.
func randomMixes(n, deg, d int) [][]Mix {
	r := rng.New(3, rng.Global, rng.PurposeInit)
	sent := make([][]float64, n)
	for j := range sent {
		sent[j] = make([]float64, d)
		for k := range sent[j] {
			sent[j][k] = r.NormFloat64()
		}
	}
	mixes := make([][]Mix, n)
	for i := range mixes {
		var terms, short []Term
		for t := range deg {
			j := (i + 7*t) % n
			terms = append(terms, Term{Coef: r.Float64(), Vec: sent[j]})
			short = append(short, Term{Coef: -r.Float64(), Vec: sent[j][:d/3]})
		}
		mixes[i] = []Mix{{Dst: make([]float64, d), Terms: terms}, {Dst: make([]float64, d/3), Terms: short}}
	}
	return mixes
}

func TestBlockedMixingIsApplyMixes(t *testing.T) {
	const n, deg, d = 9, 5, 3*mixBlock + 11
	ref := randomMixes(n, deg, d)
	for _, ms := range ref {
		ApplyMixes(ms)
	}
	for _, p := range []int{1, 2, 7} {
		got := randomMixes(n, deg, d)
		for i := range got {
			for _, m := range got[i] {
				for k := range m.Dst {
					m.Dst[k] = math.NaN() // stale values must be overwritten
				}
			}
		}
		applyMixesBlocked(got, p)
		for i := range ref {
			for q := range ref[i] {
				for k, want := range ref[i][q].Dst {
					if g := got[i][q].Dst[k]; math.Float64bits(g) != math.Float64bits(want) {
						t.Fatalf("parallel %d: receiver %d mix %d coordinate %d is %v, ApplyMixes gives %v", p, i, q, k, g, want)
					}
				}
			}
		}
	}
}

// BenchmarkMixing mixes one round of the paper's n = 100 setting
// (PDBO-MTL&DA, d_x = 23,550; about 60 in-neighbours on the stochastic
// directed network with δ ~ U[0.4, 0.8]): every receiver on its own (as
// before the blocked kernel, and as each actor does), blocked on one
// goroutine, and blocked on GOMAXPROCS goroutines. Compare them in one
// run.
func BenchmarkMixing(b *testing.B) {
	const n, deg, d = 100, 60, 23550
	mixes := randomMixes(n, deg, d)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"own", func() {
			for _, ms := range mixes {
				ApplyMixes(ms)
			}
		}},
		{"blocked", func() { applyMixesBlocked(mixes, 1) }},
		{fmt.Sprintf("blocked-parallel-%d", runtime.GOMAXPROCS(0)), func() { applyMixesBlocked(mixes, runtime.GOMAXPROCS(0)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f()
			}
		})
	}
}
