package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The float32 elementwise passes of the group norm give their scalar
// loops' bits (normVector off) on every length from 0 to 40 and on a plane of 576 (the kernels'
// steps of eight and the scalar tail), on special values (signed zeros,
// infinities, subnormals, NaNs of either sign and distinct payloads, so
// that which operand's NaN an operation returns shows), the constants
// among them.
func TestNormRuns32MatchScalar(t *testing.T) {
	needAVX(t)
	defer func(v bool) { normVector = v }(normVector)
	r := rand.New(rand.NewPCG(9, 10))
	lengths := []int{576}
	for n := 0; n <= 40; n++ {
		lengths = append(lengths, n)
	}
	check := func(what string, n int, got, want []float32) {
		t.Helper()
		if i := sameBits32(got, want); i >= 0 {
			t.Fatalf("%s, %d values: [%d] = %x, scalar loop %x", what, n, i,
				math.Float32bits(got[i]), math.Float32bits(want[i]))
		}
	}
	for _, n := range lengths {
		for trial := range 4 {
			x, xh, rx, rxh := nans32(r, n), nans32(r, n), nans32(r, n), nans32(r, n)
			h0, rh0 := nans32(r, n), nans32(r, n)
			c := special32(r, 7)
			if trial == 0 {
				c = nans32(r, 7)
			}

			y1, y2 := make([]float32, n), make([]float32, n)
			normVector = true
			outRun(y1, x, c[0], c[1], c[2], c[3])
			normVector = false
			outRun(y2, x, c[0], c[1], c[2], c[3])
			check("out", n, y1, y2)

			h1, h2 := append([]float32(nil), h0...), append([]float32(nil), h0...)
			normVector = true
			projRun(h1, x, c[0], c[1], c[2], c[3])
			normVector = false
			projRun(h2, x, c[0], c[1], c[2], c[3])
			check("proj", n, h1, h2)

			r1, r2 := make([]float32, n), make([]float32, n)
			normVector = true
			tangentRun(r1, y1, rx, xh, c[1], c[0], c[2], c[3], c[4], c[5])
			normVector = false
			tangentRun(r2, y2, rx, xh, c[1], c[0], c[2], c[3], c[4], c[5])
			check("tangent R{x̂}", n, r1, r2)
			check("tangent ry", n, y1, y2)

			h1, h2 = append(h1[:0], h0...), append(h2[:0], h0...)
			rh1, rh2 := append([]float32(nil), rh0...), append([]float32(nil), rh0...)
			normVector = true
			rprojRun(h1, rh1, xh, rxh, c[1], c[0], c[2], c[3], c[4], c[5], c[6])
			normVector = false
			rprojRun(h2, rh2, xh, rxh, c[1], c[0], c[2], c[3], c[4], c[5], c[6])
			check("rproj gx", n, h1, h2)
			check("rproj R{gx}", n, rh1, rh2)
		}
	}
}
