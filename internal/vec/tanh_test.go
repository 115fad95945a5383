package vec

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// tanhImpl is Tanh or one of its kernels called directly (so that a
// kernel whose start-up probe failed is still tested).
type tanhImpl struct {
	name string
	f    func(dst, src []float64)
}

// checkTanh runs every implementation on src and fails at the first value
// whose bits — NaN payloads included — differ from math.Tanh's.
func checkTanh(t testing.TB, what string, src []float64) {
	t.Helper()
	dst := make([]float64, len(src))
	for _, im := range tanhImpls() {
		im.f(dst, src)
		for i, x := range src {
			if want := math.Tanh(x); math.Float64bits(dst[i]) != math.Float64bits(want) {
				t.Fatalf("%s, %s: Tanh(%v) [%#x] = %v [%#x], math.Tanh gives %v [%#x]", im.name,
					what, x, math.Float64bits(x), dst[i], math.Float64bits(dst[i]), want, math.Float64bits(want))
			}
		}
	}
}

// tanhInputs are the random draws of TestTanhIsMathTanh, each n values.
var tanhInputs = []struct {
	name string
	draw func(r *rand.Rand) float64
}{
	{"uniform[-1,1]", func(r *rand.Rand) float64 { return 2*r.Float64() - 1 }},
	{"uniform[-50,50]", func(r *rand.Rand) float64 { return 100*r.Float64() - 50 }},
	{"log-uniform 1e-320…1e3", func(r *rand.Rand) float64 {
		x := math.Pow(10, -320+323*r.Float64())
		if r.IntN(2) == 0 {
			x = -x
		}
		return x
	}},
	{"|x| in [0.5, 45]", func(r *rand.Rand) float64 { return math.Copysign(0.5+44.5*r.Float64(), r.NormFloat64()) }},
	{"any bits", func(r *rand.Rand) float64 { return math.Float64frombits(r.Uint64()) }},
}

// TestTanhIsMathTanh compares Tanh with math.Tanh bit for bit on 10⁷
// random inputs over every magnitude and on arbitrary bit patterns (NaN
// payloads, subnormals, infinities).
func TestTanhIsMathTanh(t *testing.T) {
	const total, chunk = 10_000_000, 1 << 16
	per := total / len(tanhInputs)
	r := rand.New(rand.NewPCG(11, 12))
	src := make([]float64, chunk)
	for _, in := range tanhInputs {
		for done := 0; done < per; done += chunk {
			for i := range src {
				src[i] = in.draw(r)
			}
			checkTanh(t, in.name, src)
		}
	}
	t.Logf("kernel %s", tanhKernel())
}

// tanhEdges are the inputs where math.Tanh, or the math.Exp it calls,
// changes course: its cut at 0.625, its saturation at ½·log 2¹²⁷, every
// point where exp's reduction k = round(2|x|·log₂e) steps (k = 1…128),
// math.Exp's overflow threshold (halved, as tanh doubles), the subnormal
// and normal extremes, zeros, infinities and NaNs (quiet and signalling,
// with payloads).
func tanhEdges() []float64 {
	centres := []float64{0.625, 0.5 * 8.8029691931113054295988e+01, 7.09782712893384e+02 / 2,
		math.SmallestNonzeroFloat64, 0x1p-1022, math.MaxFloat64, 1, 0.5, 44, 45}
	for k := 1; k <= 128; k++ {
		centres = append(centres, (float64(k)-0.5)/(2*math.Log2E))
	}
	var xs []float64
	for _, c := range centres {
		lo, hi := c, c
		for range 64 {
			lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
		}
		for x := lo; x <= hi && !math.IsInf(x, 0); x = math.Nextafter(x, math.Inf(1)) {
			xs = append(xs, x, -x)
		}
	}
	return append(xs, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff4000000000123),
		math.Float64frombits(0x7ff8dead00000000), math.Float64frombits(0xfffabcdef0123456))
}

func TestTanhEdges(t *testing.T) {
	xs := tanhEdges()
	checkTanh(t, "edges", xs)
	// Each value also in every lane position.
	for off := 1; off < 8; off++ {
		checkTanh(t, "edges+"+strconv.Itoa(off), xs[off:])
	}
}

// TestTanhLengths covers every length up to 40 (all tails of the four- and
// eight-lane loops) at unaligned starts, and dst aliasing src.
func TestTanhLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, im := range tanhImpls() {
		testTanhLengths(t, r, im)
	}
}

func testTanhLengths(t *testing.T, r *rand.Rand, im tanhImpl) {
	for n := 0; n <= 40; n++ {
		for off := 0; off < 3; off++ {
			src := make([]float64, n+off+1)
			for i := range src {
				src[i] = r.NormFloat64() * 3
			}
			sentinel := math.Float64frombits(0x7ff8000000c0ffee)
			dst := make([]float64, len(src))
			for i := range dst {
				dst[i] = sentinel
			}
			im.f(dst[off:off+n], src[off:off+n])
			for i := range dst {
				want := sentinel
				if i >= off && i < off+n {
					want = math.Tanh(src[i])
				}
				if math.Float64bits(dst[i]) != math.Float64bits(want) {
					t.Fatalf("%s, n = %d, offset %d, element %d: %v, want %v", im.name, n, off, i, dst[i], want)
				}
			}
			in := append([]float64(nil), src[off:off+n]...)
			im.f(in, in)
			for i, x := range src[off : off+n] {
				if math.Float64bits(in[i]) != math.Float64bits(math.Tanh(x)) {
					t.Fatalf("%s in place, n = %d, element %d: %v, want %v", im.name, n, i, in[i], math.Tanh(x))
				}
			}
		}
	}
}

func TestTanhPanicsOnLengths(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for different lengths")
		}
	}()
	Tanh(make([]float64, 3), make([]float64, 4))
}

// FuzzTanh compares Tanh with math.Tanh on nine values (two four-lane
// groups and a tail, or one eight-lane group and a tail) from any bits.
func FuzzTanh(f *testing.F) {
	f.Add(uint64(0), uint64(1)<<63, math.Float64bits(0.625), math.Float64bits(44.014845965556525),
		math.Float64bits(-3), uint64(0x7ff8000000000001), uint64(1), math.Float64bits(math.Inf(-1)), math.Float64bits(0.1))
	f.Fuzz(func(t *testing.T, a, b, c, d, e, g, h, i, j uint64) {
		src := make([]float64, 9)
		for k, u := range []uint64{a, b, c, d, e, g, h, i, j} {
			src[k] = math.Float64frombits(u)
		}
		checkTanh(t, "fuzz", src)
	})
}

// BenchmarkTanh compares Tanh, and each kernel, with a math.Tanh loop on
// 8,192 values drawn as a tanh layer's inputs are (normal, standard
// deviation 2).
func BenchmarkTanh(b *testing.B) {
	const n = 8192
	r := rand.New(rand.NewPCG(15, 16))
	src, dst := make([]float64, n), make([]float64, n)
	for i := range src {
		src[i] = 2 * r.NormFloat64()
	}
	b.Run("math.Tanh", func(b *testing.B) {
		for b.Loop() {
			tanhGo(dst, src)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
	})
	for _, im := range tanhImpls() {
		name := im.name
		if name == "Tanh" {
			name += "-" + tanhKernel()
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				im.f(dst, src)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
		})
	}
}
