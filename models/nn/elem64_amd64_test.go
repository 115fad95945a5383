package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// special64 is special32 for float64, with NaNs of either sign and
// distinct payloads a third of the values.
func special64(r *rand.Rand, n int) []float64 {
	sp := []float64{
		0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1),
		math.Float64frombits(1), -math.Float64frombits(0x000fffffffffffff),
		math.MaxFloat64, -math.MaxFloat64, 1, -1,
	}
	v := make([]float64, n)
	for i := range v {
		switch r.IntN(6) {
		case 0:
			v[i] = sp[r.IntN(len(sp))]
		case 1, 2:
			v[i] = math.Float64frombits(0x7ff8000000000000 | uint64(r.IntN(1<<30)) | uint64(r.IntN(2))<<63)
		default:
			v[i] = r.NormFloat64() * math.Exp2(float64(r.IntN(80)-40))
		}
	}
	return v
}

// sameBits64 returns the first index where a and b differ in bits, or −1;
// in a race build any two NaNs count as equal (see raceBuild).
func sameBits64(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(raceBuild && a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

// The elementwise float64 kernels give their Go loops' bits on special
// values (signed zeros, infinities, NaNs of either sign with payloads,
// subnormals) for every length from 0 to 21, through the callers' split
// into the kernel's whole vectors and the Go loop's tail, and write
// nothing past n.
func TestElementwise64MatchGoLoops(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(6, 2))
	for n := 0; n <= 21; n++ {
		x := special64(r, n+3)
		// ReLU outputs: what relu gives of special values, NaNs of
		// either sign included.
		y := special64(r, n+3)
		for i, v := range y {
			if r.IntN(3) == 0 {
				y[i] = 0
			} else if !math.IsNaN(v) {
				y[i] = math.Abs(v)
			}
		}
		// A NaN bias: added to a NaN, the result's payload tells the
		// operands' order.
		bias := []float64{math.Float64frombits(0x7ff8000000000005), special64(r, 1)[0]}
		for _, c := range []struct {
			name string
			f    func(dst []float64)
		}{
			{"setBias", func(d []float64) { setBias(d[:2*n], bias, n) }},
			{"addBias", func(d []float64) { addBias(d[:2*n], bias, n) }},
			{"relu", func(d []float64) { (&relu[float64]{elementwise[float64]{Shape{1, 1, n}}}).forward(d, x, nil, 1) }},
			{"reluMask", func(d []float64) { reluMask64(d[:n], x, y) }},
		} {
			dst := special64(r, 2*n+3)
			want, got := append([]float64(nil), dst...), append([]float64(nil), dst...)
			patchVector = false
			c.f(want)
			patchVector = true
			c.f(got)
			if i := sameBits64(got, want); i >= 0 {
				t.Fatalf("%s n=%d: element %d is %x with the kernel, %x without", c.name, n, i,
					math.Float64bits(got[i]), math.Float64bits(want[i]))
			}
		}
	}
}

// addRowSums gives sum's bits with the four-row kernel, for 1 to 9 rows
// (whole groups of four and the rest), 0 to 13 columns and a leading
// dimension past them, on special values. Where two NaNs meet in the Go
// additions that finish a sum, which payload survives is the compiler's
// choice of operand order (it differs between builds of the same loop),
// so a NaN need only be a NaN.
func TestAddRowSums64MatchesSum(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(6, 3))
	for rows := 1; rows <= 9; rows++ {
		for cols := 0; cols <= 13; cols++ {
			ld := cols + r.IntN(3)
			g := special64(r, rows*ld+1)
			if r.IntN(2) == 0 {
				// Mostly finite rows, whose sums are not NaN.
				for i := range g {
					if g[i] != g[i] || math.IsInf(g[i], 0) {
						g[i] = r.NormFloat64()
					}
				}
			}
			gb := special64(r, rows)
			want, got := append([]float64(nil), gb...), append([]float64(nil), gb...)
			patchVector = false
			addRowSums(want, g, ld, cols)
			patchVector = true
			addRowSums(got, g, ld, cols)
			for i := range got {
				if got[i] != got[i] && want[i] != want[i] {
					got[i] = want[i]
				}
			}
			if i := sameBits64(got, want); i >= 0 {
				t.Fatalf("rows=%d cols=%d: sum %d is %x with the kernel, %x without", rows, cols, i,
					math.Float64bits(got[i]), math.Float64bits(want[i]))
			}
		}
	}
}
