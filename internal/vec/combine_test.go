package vec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"golang.org/x/sys/cpu"
)

// combineRef is Combine's order contract written out: clear, then one
// scaled addition per term, in order.
func combineRef(dst []float64, terms []Term, off int) {
	clear(dst)
	for _, t := range terms {
		AddScaled(dst, t.Coef, t.Vec[off:off+len(dst)])
	}
}

// specials are the values that tell summation orders and fused products
// apart: signed zeros, infinities, NaN, subnormals, the largest finite
// value (whose products overflow) and values whose sums cancel.
var specials = []float64{
	0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
	5e-324, -5e-324, 2.2250738585072014e-308 / 3, math.MaxFloat64, -math.MaxFloat64,
	1, -1, 1 + 0x1p-52, 0x1p-60,
}

// randomTerms returns k terms of vectors of length n, with coefficients and
// coordinates over 40 decades and, when special, about one value in eight
// from specials.
func randomTerms(r *rand.Rand, k, n int, special bool) []Term {
	v := func() float64 {
		if special && r.IntN(8) == 0 {
			return specials[r.IntN(len(specials))]
		}
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	}
	terms := make([]Term, k)
	for t := range terms {
		terms[t].Coef = v()
		terms[t].Vec = make([]float64, n)
		for i := range terms[t].Vec {
			terms[t].Vec[i] = v()
		}
	}
	return terms
}

// sameBits reports whether a and b have the same bits, or are both NaN
// (the pure-Go kernels need not keep which of two NaN operands' payload
// survives, gonum's does not either).
func sameBits(a, b float64, exactNaN bool) bool {
	if exactNaN {
		return math.Float64bits(a) == math.Float64bits(b)
	}
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestCombineIsAddScaled compares Combine with clear-then-AddScaled bit for
// bit, on both kernels, for term counts 0…70, lengths 0…3000 (every tail of
// the groups of 32 and 4), offsets into longer vectors and special values.
// The AVX2 kernel must even keep AddScaled's NaN payloads.
func TestCombineIsAddScaled(t *testing.T) {
	defer func(h, w bool) { hasAVX2, hasAVX512 = h, w }(hasAVX2, hasAVX512)
	r := rand.New(rand.NewPCG(5, 6))
	lengths := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 31, 32, 33, 35, 36, 63, 64, 65, 67, 71, 72, 100, 127, 128, 129, 1023, 1024, 1025, 2999, 3000}
	for range 20 {
		lengths = append(lengths, r.IntN(3001))
	}
	for _, kern := range combineKernels() {
		hasAVX2, hasAVX512 = kern.avx2, kern.avx512
		avx := kern.avx2
		for _, n := range lengths {
			for _, k := range []int{0, 1, 2, 3, 7, 60, 70} {
				for _, special := range []bool{false, true} {
					off := r.IntN(5)
					terms := randomTerms(r, k, off+n+r.IntN(3), special)
					want, got := make([]float64, n), make([]float64, n)
					for i := range got {
						got[i] = math.NaN() // stale values must be overwritten
					}
					combineRef(want, terms, off)
					Combine(got, terms, off)
					for i := range want {
						if !sameBits(got[i], want[i], avx) {
							t.Fatalf("kernel %s, %d terms, length %d from %d, coordinate %d: %v (%#x), clear-then-AddScaled gives %v (%#x)",
								kern.name, k, n, off, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
						}
					}
				}
			}
		}
	}
}

// TestCombineSignedZero checks the +0 start: terms whose products are all
// −0 sum to +0, as clear-then-AddScaled gives, not to −0.
func TestCombineSignedZero(t *testing.T) {
	defer func(h, w bool) { hasAVX2, hasAVX512 = h, w }(hasAVX2, hasAVX512)
	negZero := math.Copysign(0, -1)
	for _, kern := range combineKernels() {
		hasAVX2, hasAVX512 = kern.avx2, kern.avx512
		for _, n := range []int{1, 4, 8, 32, 37, 64, 75} {
			v := make([]float64, n)
			for i := range v {
				v[i] = negZero
			}
			got := make([]float64, n)
			Combine(got, []Term{{Coef: 1, Vec: v}, {Coef: 2, Vec: v}}, 0)
			for i, g := range got {
				if math.Signbit(g) {
					t.Fatalf("kernel %s, length %d, coordinate %d: −0, want +0", kern.name, n, i)
				}
			}
		}
	}
}

func TestCombinePanicsOnShortTerm(t *testing.T) {
	for _, c := range []struct {
		name string
		off  int
	}{{"short", 1}, {"negative offset", -1}} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			Combine(make([]float64, 4), []Term{{Coef: 1, Vec: make([]float64, 5)}, {Coef: 1, Vec: make([]float64, 4)}}, c.off)
		})
	}
}

// BenchmarkCombine compares Combine with clear-then-AddScaled on a block of
// mixing at the paper's n = 100 setting: 60 terms of 1,024 coordinates.
func BenchmarkCombine(b *testing.B) {
	const k = 60
	for _, n := range []int{32, 1024} {
		r := rand.New(rand.NewPCG(7, 8))
		terms := randomTerms(r, k, n, false)
		dst := make([]float64, n)
		b.Run("addscaled/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				combineRef(dst, terms, 0)
			}
		})
		b.Run("combine/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Combine(dst, terms, 0)
			}
		})
	}
}

// combineKernel selects one of Combine's implementations.
type combineKernel struct {
	name         string
	avx2, avx512 bool
}

// combineKernels lists the implementations this CPU can run, whatever the
// environment chose: pure Go, AVX2, and AVX-512 where the CPU has AVX-512F.
func combineKernels() []combineKernel {
	ks := []combineKernel{{name: "go"}}
	if cpu.X86.HasAVX2 {
		ks = append(ks, combineKernel{"avx2", true, false})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasAVX512F {
		ks = append(ks, combineKernel{"avx512", true, true})
	}
	return ks
}
