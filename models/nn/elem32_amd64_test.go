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
		x := nans32(r, n+3)
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
			dst := nans32(r, 2*n+3)
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

// The L2 terms of Grad and HVP in float32: the kernels give the Go loops'
// bits (sums of squares included) on special values, a third of them NaNs
// of distinct payloads (so that which operand's NaN an operation returns
// shows), NaN weights among them, for every length from 0 to 40.
func TestL2Terms32MatchGoLoops(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(8, 1))
	for n := 0; n <= 40; n++ {
		for _, l2 := range []float32{1e-3, math.Float32frombits(0x7fc00007), float32(math.Inf(1))} {
			x, dst := nans32(r, n), nans32(r, n)
			want, got := append([]float32(nil), dst...), append([]float32(nil), dst...)
			patchVector = false
			ssWant := l2Grad32(want, x, l2)
			patchVector = true
			ssGot := l2Grad32(got, x, l2)
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("l2Grad32 n=%d l2=%v: element %d is %x with the kernel, %x without", n, l2, i,
					math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
			if math.Float64bits(ssGot) != math.Float64bits(ssWant) && !(raceBuild && ssGot != ssGot && ssWant != ssWant) {
				t.Fatalf("l2Grad32 n=%d l2=%v: ‖x‖² is %x with the kernel, %x without", n, l2,
					math.Float64bits(ssGot), math.Float64bits(ssWant))
			}
		}
	}
}

// nans32 is special32 with a third of the values NaNs of either sign and
// distinct payloads.
func nans32(r *rand.Rand, n int) []float32 {
	v := special32(r, n)
	for i := range v {
		if r.IntN(3) == 0 {
			v[i] = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<22)) | uint32(r.IntN(2))<<31)
		}
	}
	return v
}

// addRowSums gives sum's bits in float32 with the four-row kernel, for 1
// to 9 rows (whole groups of four and the rest), 0 to 21 columns and a
// leading dimension past them, on special values, half the chunks finite
// (whose sums are not NaN, so a change of order shows in the rounding).
// As for float64, two NaNs met in the Go additions that finish a sum
// leave the compiler's choice of payload, so a NaN need only be a NaN.
func TestAddRowSums32MatchesSum(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(6, 4))
	for rows := 1; rows <= 9; rows++ {
		for cols := 0; cols <= 21; cols++ {
			ld := cols + r.IntN(3)
			g := special32(r, rows*ld+1)
			if r.IntN(2) == 0 {
				for i := range g {
					if g[i] != g[i] || math.IsInf(float64(g[i]), 0) {
						g[i] = float32(r.NormFloat64())
					}
				}
			}
			gb := special32(r, rows)
			want, got := append([]float32(nil), gb...), append([]float32(nil), gb...)
			patchVector = false
			addRowSums(want, g, ld, cols)
			patchVector = true
			addRowSums(got, g, ld, cols)
			for i := range got {
				if got[i] != got[i] && want[i] != want[i] {
					got[i] = want[i]
				}
			}
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("rows=%d cols=%d: sum %d is %x with the kernel, %x without", rows, cols, i,
					math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}
