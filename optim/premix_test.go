package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"hgpsim/internal/rng"
	"hgpsim/internal/vec"
)

// randomMixes returns n receivers' mixes of deg senders' vectors of
// length d (plus a second, shorter mix per receiver), as HGP and VR-HGP
// make them.
// mixBlock is the blocked mixing's block in float64 coordinates.
const mixBlock = mixBlockBytes / 8

func randomMixes(n, deg, d int) [][]Mix[float64] {
	r := rng.New(3, rng.Global, rng.PurposeInit)
	sent := make([][]float64, n)
	for j := range sent {
		sent[j] = make([]float64, d)
		for k := range sent[j] {
			sent[j][k] = r.NormFloat64()
		}
	}
	mixes := make([][]Mix[float64], n)
	for i := range mixes {
		var terms, short []Term[float64]
		for t := range deg {
			j := (i + 7*t) % n
			terms = append(terms, Term[float64]{Coef: r.Float64(), Vec: sent[j]})
			short = append(short, Term[float64]{Coef: -r.Float64(), Vec: sent[j][:d/3]})
		}
		mixes[i] = []Mix[float64]{{Dst: make([]float64, d), Terms: terms}, {Dst: make([]float64, d/3), Terms: short}}
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
		applyMixesBlocked(&mixStage[float64]{}, got, p)
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

// mixAddScaled is the mixing arithmetic written out, the reference for
// every kernel: each Dst cleared, then Coef·Vec added term by term.
func mixAddScaled(ms []Mix[float64]) {
	for _, m := range ms {
		clear(m.Dst)
		for _, t := range m.Terms {
			vec.AddScaled(m.Dst, t.Coef, t.Vec)
		}
	}
}

// specialMixes returns receivers' mixes as a round makes them, at random:
// two kinds of mix (of lengths d and d/3+1, views of the same vectors), each receiver taking a random
// subsequence of the senders in sender order (0 to 70 terms), so that
// receivers share senders; values span 40 decades and, with special,
// include signed zeros, infinities, NaN and subnormals.
func specialMixes(r *rand.Rand, receivers, senders, d int, special bool) [][]Mix[float64] {
	specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -1e-310, math.MaxFloat64}
	val := func() float64 {
		if special && r.IntN(16) == 0 {
			return specials[r.IntN(len(specials))]
		}
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	}
	sent := make([][]float64, senders)
	for j := range sent {
		sent[j] = make([]float64, d)
		for k := range sent[j] {
			sent[j][k] = val()
		}
	}
	short := min(d/3+1, d)
	mixes := make([][]Mix[float64], receivers)
	for i := range mixes {
		lengths := []int{d, short}
		if i%2 == 0 {
			// A sender's shorter view comes first: the blocked mixing
			// must stage the longer one.
			lengths[0], lengths[1] = short, d
		}
		for _, length := range lengths {
			want := r.IntN(min(70, senders) + 1)
			var terms []Term[float64]
			for j := range senders {
				// Keep j with the probability that leaves want terms on average.
				if r.IntN(senders) < want {
					terms = append(terms, Term[float64]{Coef: val(), Vec: sent[j][:length]})
				}
			}
			dst := make([]float64, length)
			for k := range dst {
				dst[k] = math.NaN() // stale values must be overwritten
			}
			mixes[i] = append(mixes[i], Mix[float64]{Dst: dst, Terms: terms})
		}
	}
	return mixes
}

// TestMixingIsAddScaled compares ApplyMixes and the blocked mixing at
// several parallelisms with mixAddScaled, bit for bit (any NaN matching any
// NaN, as the pure-Go kernels may keep either operand's payload), on random
// rounds: 0 to 70 terms, lengths 0 to 3,000 with every kind of tail, and
// special values. Run it with HGPSIM_NOAVX2=1 too for the pure-Go kernels.
func TestMixingIsAddScaled(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	lengths := []int{0, 1, 3, 4, 17, 31, 32, 33, mixBlock - 1, mixBlock, mixBlock + 1, 2*mixBlock + 5, 3000}
	for range 8 {
		lengths = append(lengths, r.IntN(3001))
	}
	for _, d := range lengths {
		for _, special := range []bool{false, true} {
			seed := r.Uint64()
			fresh := func() [][]Mix[float64] { return specialMixes(rand.New(rand.NewPCG(seed, 1)), 9, 80, d, special) }
			want := fresh()
			for _, ms := range want {
				mixAddScaled(ms)
			}
			check := func(name string, got [][]Mix[float64]) {
				t.Helper()
				for i := range want {
					for q := range want[i] {
						for k, w := range want[i][q].Dst {
							g := got[i][q].Dst[k]
							if math.Float64bits(g) != math.Float64bits(w) && !(math.IsNaN(g) && math.IsNaN(w)) {
								t.Fatalf("%s, d = %d: receiver %d mix %d (%d terms) coordinate %d is %v, clear-then-AddScaled gives %v",
									name, d, i, q, len(want[i][q].Terms), k, g, w)
							}
						}
					}
				}
			}
			got := fresh()
			for _, ms := range got {
				ApplyMixes(ms)
			}
			check("ApplyMixes", got)
			for _, p := range []int{1, 2, 3} {
				got := fresh()
				applyMixesBlocked(&mixStage[float64]{}, got, p)
				check(fmt.Sprintf("blocked on %d", p), got)
			}
		}
	}
}

// TestBlockedMixingPanicsOnShortTerm checks that a term shorter than its
// mix is refused, as ApplyMixes refuses it, rather than read from the
// staging buffer's stale coordinates.
func TestBlockedMixingPanicsOnShortTerm(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	v := make([]float64, 10)
	applyMixesBlocked(&mixStage[float64]{}, [][]Mix[float64]{{{Dst: make([]float64, 10), Terms: []Term[float64]{{Coef: 1, Vec: v}}}}, {{Dst: make([]float64, 10), Terms: []Term[float64]{{Coef: 1, Vec: v[:9]}}}}}, 1)
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
	var stage mixStage[float64]
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"own", func() {
			for _, ms := range mixes {
				ApplyMixes(ms)
			}
		}},
		{"blocked", func() { applyMixesBlocked(&stage, mixes, 1) }},
		{fmt.Sprintf("blocked-parallel-%d", runtime.GOMAXPROCS(0)), func() { applyMixesBlocked(&stage, mixes, runtime.GOMAXPROCS(0)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f()
			}
		})
	}
}
