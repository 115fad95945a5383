package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The elementwise float32 kernels give their Go loops' bits on special
// values (signed zeros, infinities, NaNs of either sign with payloads,
// subnormals) for every length from 0 to 40, through the callers' split
// into the kernel's whole vectors and the Go loop's tail, and write
// nothing past n.
func TestElementwise32MatchGoLoops(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(6, 1))
	for n := 0; n <= 40; n++ {
		x := special32(r, n+3)
		// ReLU outputs: what relu gives of special values, NaNs of
		// either sign included.
		y := special32(r, n+3)
		for i, v := range y {
			if r.IntN(3) == 0 {
				y[i] = 0
			} else if !math.IsNaN(float64(v)) {
				y[i] = float32(math.Abs(float64(v)))
			}
		}
		// A NaN bias: added to a NaN, the result's payload tells the
		// operands' order.
		bias := []float32{math.Float32frombits(0x7fc00005), special32(r, 1)[0]}
		for _, c := range []struct {
			name string
			f    func(dst []float32)
		}{
			{"setBias", func(d []float32) { setBias(d[:2*n], bias, n) }},
			{"addBias", func(d []float32) { addBias(d[:2*n], bias, n) }},
			{"relu", func(d []float32) { (&relu[float32]{elementwise[float32]{Shape{1, 1, n}}}).forward(d, x, nil, 1) }},
			{"reluMask", func(d []float32) { reluMask32(d[:n], x, y) }},
		} {
			dst := special32(r, 2*n+3)
			want, got := append([]float32(nil), dst...), append([]float32(nil), dst...)
			patchVector = false
			c.f(want)
			patchVector = true
			c.f(got)
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("%s n=%d: element %d is %x with the kernel, %x without", c.name, n, i,
					math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}
