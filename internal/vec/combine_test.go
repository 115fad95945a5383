package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/cpu"
)

// combineRef is Combine's order contract written out: clear, then one
// scaled addition per term, in order.
func combineRef[F Float](dst []F, terms []Term[F], off int) {
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

// specials32 are specials for float32: its subnormals, largest value and
// last bit.
var specials32 = []float32{
	0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	0x1p-149, -0x1p-149, 0x1p-126 / 3, math.MaxFloat32, -math.MaxFloat32,
	1, -1, 1 + 0x1p-23, 0x1p-30,
}

// specialValue returns one of the special values of F.
func specialValue[F Float](r *rand.Rand) F {
	if Is64[F]() {
		return F(specials[r.IntN(len(specials))])
	}
	return F(specials32[r.IntN(len(specials32))])
}

// randomTerms returns k terms of vectors of length n, with coefficients and
// coordinates over 40 decades (20 in float32, whose range is narrower)
// and, when special, about one value in eight from the specials.
func randomTerms[F Float](r *rand.Rand, k, n int, special bool) []Term[F] {
	decades := 40
	if !Is64[F]() {
		decades = 20
	}
	v := func() F {
		if special && r.IntN(8) == 0 {
			return specialValue[F](r)
		}
		return F(r.NormFloat64() * math.Pow(10, float64(r.IntN(decades)-decades/2)))
	}
	terms := make([]Term[F], k)
	for t := range terms {
		terms[t].Coef = v()
		terms[t].Vec = make([]F, n)
		for i := range terms[t].Vec {
			terms[t].Vec[i] = v()
		}
	}
	return terms
}

// bits returns x's bits, widened to 64.
func bits[F Float](x F) uint64 {
	if Is64[F]() {
		return math.Float64bits(float64(x))
	}
	return uint64(math.Float32bits(float32(x)))
}

// sameBits reports whether a and b have the same bits, or are both NaN
// (the pure-Go kernels need not keep which of two NaN operands' payload
// survives, gonum's does not either).
func sameBits[F Float](a, b F, exactNaN bool) bool {
	if exactNaN {
		return bits(a) == bits(b)
	}
	return bits(a) == bits(b) || a != a && b != b
}

// combineLengths are the lengths Combine is checked on: every tail of the
// groups of 32, 4 (float64) and 64, 8 (float32) of AVX2 and of those of
// AVX-512, and random ones.
func combineLengths(r *rand.Rand) []int {
	lengths := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 35, 36, 63, 64, 65, 67, 71, 72, 79, 80,
		100, 127, 128, 129, 135, 136, 143, 144, 255, 256, 257, 1023, 1024, 1025, 2999, 3000}
	for range 20 {
		lengths = append(lengths, r.IntN(3001))
	}
	return lengths
}

// checkCombine compares comb with clear-then-AddScaled bit for bit, for
// term counts 0…70, the lengths above, offsets into longer vectors and
// special values, and returns the first difference ("" for none). An
// assembly kernel must even keep AddScaled's NaN payloads.
func checkCombine[F Float](r *rand.Rand, comb func([]F, []Term[F], int), exactNaN bool) string {
	for _, n := range combineLengths(r) {
		for _, k := range []int{0, 1, 2, 3, 7, 60, 70} {
			for _, special := range []bool{false, true} {
				off := r.IntN(5)
				terms := randomTerms[F](r, k, off+n+r.IntN(3), special)
				want, got := make([]F, n), make([]F, n)
				for i := range got {
					got[i] = F(math.NaN()) // stale values must be overwritten
				}
				combineRef(want, terms, off)
				comb(got, terms, off)
				for i := range want {
					if !sameBits(got[i], want[i], exactNaN) {
						return fmt.Sprintf("%d terms, length %d from %d, coordinate %d: %v (%#x), clear-then-AddScaled gives %v (%#x)",
							k, n, off, i, got[i], bits(got[i]), want[i], bits(want[i]))
					}
				}
			}
		}
	}
	return ""
}

// TestCombineIsAddScaled checks Combine against clear-then-AddScaled on
// every kernel, in both precisions.
func TestCombineIsAddScaled(t *testing.T) {
	defer func(h, w bool) { hasAVX2, hasAVX512 = h, w }(hasAVX2, hasAVX512)
	r := rand.New(rand.NewPCG(5, 6))
	for _, kern := range combineKernels() {
		hasAVX2, hasAVX512 = kern.avx2, kern.avx512
		if d := checkCombine(r, Combine[float64], kern.avx2); d != "" {
			t.Errorf("kernel %s, float64: %s", kern.name, d)
		}
		if d := checkCombine(r, Combine[float32], kern.avx2); d != "" {
			t.Errorf("kernel %s, float32: %s", kern.name, d)
		}
	}
}

// TestCombineCheckCatchesPlantedBugs shows that checkCombine fails a kernel
// that breaks the order contract the ways a kernel could: summing the
// terms in another order, fusing product and sum, or starting from the
// first product instead of +0.
func TestCombineCheckCatchesPlantedBugs(t *testing.T) {
	reversed := func(dst []float32, terms []Term[float32], off int) {
		rev := slices.Clone(terms)
		slices.Reverse(rev)
		combineGo(dst, rev, off)
	}
	fused := func(dst []float32, terms []Term[float32], off int) {
		clear(dst)
		for _, t := range terms {
			for i := range dst {
				dst[i] = float32(math.FMA(float64(t.Coef), float64(t.Vec[off+i]), float64(dst[i])))
			}
		}
	}
	fromFirst := func(dst []float32, terms []Term[float32], off int) {
		combineGo(dst, terms, off)
		if len(terms) == 0 {
			return
		}
		for i := range dst {
			if dst[i] == 0 {
				dst[i] = float32(terms[0].Coef * terms[0].Vec[off+i]) // −0 survives
			}
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	for name, bug := range map[string]func([]float32, []Term[float32], int){"reversed": reversed, "fused": fused, "from first": fromFirst} {
		if checkCombine(r, bug, false) == "" {
			t.Errorf("the %s kernel passed", name)
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
			Combine(got, []Term[float64]{{Coef: 1, Vec: v}, {Coef: 2, Vec: v}}, 0)
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
			Combine(make([]float64, 4), []Term[float64]{{Coef: 1, Vec: make([]float64, 5)}, {Coef: 1, Vec: make([]float64, 4)}}, c.off)
		})
	}
}

// BenchmarkCombine compares Combine with clear-then-AddScaled on a block of
// mixing at the paper's n = 100 setting: 60 terms of 1,024 coordinates.
func BenchmarkCombine(b *testing.B) {
	const k = 60
	for _, n := range []int{32, 1024} {
		r := rand.New(rand.NewPCG(7, 8))
		terms := randomTerms[float64](r, k, n, false)
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
		terms32 := randomTerms[float32](r, k, n, false)
		dst32 := make([]float32, n)
		b.Run("addscaled32/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				combineRef(dst32, terms32, 0)
			}
		})
		b.Run("combine32/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Combine(dst32, terms32, 0)
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
