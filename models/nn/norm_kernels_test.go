package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// normValues returns n values mixing ordinary, tiny, huge and signed-zero
// ones.
func normValues(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch r.IntN(8) {
		case 0:
			v[i] = math.Copysign(0, -1)
		case 1:
			v[i] = 0
		case 2:
			v[i] = r.NormFloat64() * 1e-310 // subnormal
		case 3:
			v[i] = r.NormFloat64() * 1e300
		default:
			v[i] = r.NormFloat64()
		}
	}
	return v
}

func sameBitsOrFail(t *testing.T, what string, n int, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s, %d values: [%d] = %v, scalar loop %v", what, n, i, got[i], want[i])
		}
	}
}

// The elementwise passes give the scalar loops' bits on every length (the
// vector kernels where they run, with the scalar tail).
func TestNormRunsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 13, 576} {
		x, xh, rx, rxh := normValues(r, n), normValues(r, n), normValues(r, n), normValues(r, n)
		h0, rh0 := normValues(r, n), normValues(r, n)
		c := normValues(r, 7)
		c[1] = math.Abs(c[1]) + 0.5 // s

		y1, y2 := make([]float64, n), make([]float64, n)
		outRun(y1, x, c[0], c[1], c[2], c[3])
		outScalar(y2, x, c[0], c[1], c[2], c[3])
		sameBitsOrFail(t, "out", n, y1, y2)

		h1, h2 := append([]float64(nil), h0...), append([]float64(nil), h0...)
		projRun(h1, x, c[0], c[1], c[2], c[3])
		projScalar(h2, x, c[0], c[1], c[2], c[3])
		sameBitsOrFail(t, "proj", n, h1, h2)

		r1, r2 := make([]float64, n), make([]float64, n)
		tangentRun(r1, y1, rx, xh, c[1], c[0], c[2], c[3], c[4], c[5])
		tangentScalar(r2, y2, rx, xh, c[1], c[0], c[2], c[3], c[4], c[5])
		sameBitsOrFail(t, "tangent R{x̂}", n, r1, r2)
		sameBitsOrFail(t, "tangent ry", n, y1, y2)

		h1, h2 = append([]float64(nil), h0...), append([]float64(nil), h0...)
		rh1, rh2 := append([]float64(nil), rh0...), append([]float64(nil), rh0...)
		rprojRun(h1, rh1, xh, rxh, c[1], c[0], c[2], c[3], c[4], c[5], c[6])
		rprojScalar(h2, rh2, xh, rxh, c[1], c[0], c[2], c[3], c[4], c[5], c[6])
		sameBitsOrFail(t, "rproj gx", n, h1, h2)
		sameBitsOrFail(t, "rproj R{gx}", n, rh1, rh2)

		gx1, gx2 := make([]float64, n), make([]float64, n)
		projGRun(gx1, h0, x, c[0], c[1], c[2], c[3], c[4])
		projGScalar(gx2, h0, x, c[0], c[1], c[2], c[3], c[4])
		sameBitsOrFail(t, "projG", n, gx1, gx2)

		xh1, xh2 := make([]float64, n), make([]float64, n)
		tangentXRun(r1, y1, rx, x, xh1, c[0], c[1], c[2], c[3], c[4], c[5], c[6])
		tangentXScalar(r2, y2, rx, x, xh2, c[0], c[1], c[2], c[3], c[4], c[5], c[6])
		sameBitsOrFail(t, "tangentX x̂", n, xh1, xh2)
		sameBitsOrFail(t, "tangentX R{x̂}", n, r1, r2)
		sameBitsOrFail(t, "tangentX ry", n, y1, y2)
	}
}
