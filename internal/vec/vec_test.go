package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestAddScaledIsGonums compares AddScaled with floats.AddScaled bit for bit
// on every length up to 300 (all tails of the unrolled loop), unaligned
// starts, magnitudes over 40 decades, infinities, NaN and signed zeros.
func TestAddScaledIsGonums(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		for off := 0; off < 3; off++ {
			x, y := make([]float64, n+off), make([]float64, n+off)
			for i := range x {
				x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
				y[i] = r.NormFloat64()
			}
			if n > 8 {
				x[off+3], y[off+4] = math.Inf(1), math.NaN()
				x[off+5], y[off+5] = 0, math.Copysign(0, -1)
				x[off+6], y[off+6] = math.Copysign(0, -1), 0
			}
			a := r.NormFloat64()
			want, got := append([]float64(nil), y...), append([]float64(nil), y...)
			floats.AddScaled(want[off:], a, x[off:])
			AddScaled(got[off:], a, x[off:])
			for i := range want {
				w, g := want[i], got[i]
				if math.Float64bits(w) != math.Float64bits(g) && !(math.IsNaN(w) && math.IsNaN(g)) {
					t.Fatalf("n = %d, offset %d, coordinate %d: %v, gonum gives %v", n, off, i, g, w)
				}
			}
		}
	}
	t.Logf("AVX2 kernel: %v", hasAVX2)
}

// TestAddScaledSumSquaresIsGonums compares AddScaledSumSquares with
// floats.AddScaled and floats.Dot(x, x) bit for bit on every length up to
// 300 (every tail) and long vectors, unaligned starts, magnitudes over 40
// decades (sums that depend on their order), infinities, NaN and signed
// zeros.
func TestAddScaledSumSquaresIsGonums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lengths := []int{1000, 50890, 50893}
	for n := range 300 {
		lengths = append(lengths, n)
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	for _, n := range lengths {
		for off := range 3 {
			x, y := make([]float64, n+off), make([]float64, n+off)
			for i := range x {
				x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
				y[i] = r.NormFloat64()
			}
			if n > 8 && off == 2 {
				x[off+3], y[off+4] = math.Inf(1), math.NaN()
				x[off+5], y[off+5] = 0, math.Copysign(0, -1)
				x[off+6], y[off+6] = math.Copysign(0, -1), 0
			}
			a := r.NormFloat64()
			want, got := append([]float64(nil), y...), append([]float64(nil), y...)
			floats.AddScaled(want[off:], a, x[off:])
			wantSS := floats.Dot(x[off:], x[off:])
			gotSS := AddScaledSumSquares(got[off:], a, x[off:])
			if !same(gotSS, wantSS) {
				t.Fatalf("n = %d, offset %d: ‖x‖² = %v, gonum gives %v", n, off, gotSS, wantSS)
			}
			for i := range want {
				if !same(want[i], got[i]) {
					t.Fatalf("n = %d, offset %d, coordinate %d: %v, gonum gives %v", n, off, i, got[i], want[i])
				}
			}
		}
	}
}

func TestAddScaledPanicsOnLengths(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for different lengths")
		}
	}()
	AddScaled(make([]float64, 3), 1, make([]float64, 4))
}

// BenchmarkAddScaled compares the kernel with gonum's on a row of
// Fashion-MNIST pixels (784, in L1: the models' products) and on a
// PDBO-MTL&DA vector block (1024, as mixing uses it).
func BenchmarkAddScaled(b *testing.B) {
	for _, n := range []int{784, 1024} {
		x, y := make([]float64, n), make([]float64, n)
		b.Run("gonum/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				floats.AddScaled(y, 0.5, x)
			}
		})
		b.Run("vec/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				AddScaled(y, 0.5, x)
			}
		})
		x32, y32 := make([]float32, n), make([]float32, n)
		b.Run("vec32/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				AddScaled(y32, 0.5, x32)
			}
		})
	}
}

// TestDotRowsIsGonums compares DotRows with floats.Dot row by row, bit for
// bit, for every row length up to 70 (all tails), row counts 1…9 (the
// groups of four and the rest), strides with gaps, wide magnitudes and
// special values.
func TestDotRowsIsGonums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 70; n++ {
		for rows := 1; rows <= 9; rows++ {
			stride := n + r.IntN(3)
			m := make([]float64, (rows-1)*stride+n)
			a := make([]float64, n)
			for i := range m {
				m[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-15))
			}
			for i := range a {
				a[i] = r.NormFloat64()
			}
			if n > 6 && rows > 5 {
				m[stride+2], a[5] = math.Inf(-1), math.Copysign(0, -1)
				m[5*stride+1] = math.NaN()
			}
			got := make([]float64, rows)
			DotRows(got, m, stride, a)
			for j := range got {
				want := floats.Dot(m[j*stride:j*stride+n], a)
				if math.Float64bits(got[j]) != math.Float64bits(want) && !(math.IsNaN(got[j]) && math.IsNaN(want)) {
					t.Fatalf("n = %d, rows = %d, stride %d, row %d: %v, gonum gives %v", n, rows, stride, j, got[j], want)
				}
			}
		}
	}
}

// BenchmarkDotRows compares ten dot products of 784 (the logits of softmax
// regression on Fashion-MNIST) with gonum's one at a time.
func BenchmarkDotRows(b *testing.B) {
	const rows, n = 10, 784
	m, a, dst := make([]float64, rows*n), make([]float64, n), make([]float64, rows)
	b.Run("gonum", func(b *testing.B) {
		for b.Loop() {
			for j := range dst {
				dst[j] = floats.Dot(m[j*n:(j+1)*n], a)
			}
		}
	})
	b.Run("vec", func(b *testing.B) {
		for b.Loop() {
			DotRows(dst, m, n, a)
		}
	})
}

// addScaled32Oracle is the float32 AddScaled computed in float64 and
// rounded: a product of two float32 values is exact in float64, and a sum
// of two rounded twice (to float64, then to float32) is the sum rounded
// once, since float64 carries more than twice float32's 24 bits.
func addScaled32Oracle(dst []float32, alpha float32, s []float32) {
	for i := range dst {
		p := float32(float64(alpha) * float64(s[i]))
		dst[i] = float32(float64(dst[i]) + float64(p))
	}
}

// TestAddScaled32 checks the float32 AddScaled on every kernel against the
// oracle above, bit for bit, on every length up to 300 (all tails of the
// groups of 32 and 8), unaligned starts, magnitudes over 20 decades and
// special values; a planted fused kernel must fail the same check.
func TestAddScaled32(t *testing.T) {
	defer func(h, w bool) { hasAVX2, hasAVX512 = h, w }(hasAVX2, hasAVX512)
	check := func(add func([]float32, float32, []float32)) string {
		r := rand.New(rand.NewPCG(3, 4))
		for n := 0; n < 300; n++ {
			for off := 0; off < 3; off++ {
				x, y := make([]float32, n+off), make([]float32, n+off)
				for i := range x {
					x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
					y[i] = float32(r.NormFloat64())
					if r.IntN(8) == 0 {
						x[i] = specials32[r.IntN(len(specials32))]
					}
				}
				a := float32(r.NormFloat64())
				want, got := slices.Clone(y), slices.Clone(y)
				addScaled32Oracle(want[off:], a, x[off:])
				add(got[off:], a, x[off:])
				for i := range want {
					if !sameBits(got[i], want[i], false) {
						return fmt.Sprintf("n = %d, offset %d, coordinate %d: %v, the oracle gives %v", n, off, i, got[i], want[i])
					}
				}
			}
		}
		return ""
	}
	for _, kern := range combineKernels() {
		hasAVX2, hasAVX512 = kern.avx2, kern.avx512
		if d := check(AddScaled[float32]); d != "" {
			t.Errorf("kernel %s: %s", kern.name, d)
		}
	}
	fused := func(dst []float32, alpha float32, s []float32) {
		for i := range dst {
			dst[i] = float32(math.FMA(float64(alpha), float64(s[i]), float64(dst[i])))
		}
	}
	if check(fused) == "" {
		t.Error("a fused kernel passed")
	}
}
