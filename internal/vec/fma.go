package vec

import "math"

// FMA returns x·y + s rounded once to F, as the vector fused multiply-add
// instructions (VFMADD231PD, VFMADD231PS) compute it, on any machine.
func FMA[F Float](x, y, s F) F {
	if Is64[F]() {
		return F(math.FMA(float64(x), float64(y), float64(s)))
	}
	return F(FMA32(float32(x), float32(y), float32(s)))
}

// FMA32 returns x·y + s rounded once to float32.
//
// The product of two float32 values is exact in float64, so the float64
// sum r = x·y + s is the exact sum rounded once; rounding r to float32
// then gives the right result except when r lies exactly halfway between
// two float32 values (its 29 bits below float32's last place are 1 and 28
// zeros) or in float32's subnormal range, where the last place moves.
// Those rare cases take fma32Odd.
func FMA32(x, y, s float32) float32 {
	r := float64(x)*float64(y) + float64(s)
	u := math.Float64bits(r)
	if u&(1<<29-1) != 1<<28 && u&(0x7ff<<52) >= (1023-126)<<52 {
		return float32(r)
	}
	return fma32Odd(x, y, s)
}

// fma32Odd is FMA32 by rounding the float64 sum to odd (inexact results
// take the neighbour with an odd last bit), after which rounding to
// float32 is correct whenever float64 keeps at least two more bits
// (Boldo and Melquiond, 2008); it keeps 29 more. The rounding error e of
// the float64 sum r is exact by Knuth's two-sum, and tells whether r is
// inexact and on which side of r the exact sum lies.
func fma32Odd(x, y, s float32) float32 {
	p := float64(x) * float64(y)
	c := float64(s)
	r := p + c
	b := r - p
	e := (p - (r - b)) + (c - b) // NaN when r is infinite or NaN: then r is exact
	if u := math.Float64bits(r); (e > 0 || e < 0) && u&1 == 0 {
		if (e > 0) == (r > 0) {
			u++ // away from zero, toward the exact sum
		} else {
			u--
		}
		r = math.Float64frombits(u)
	}
	return float32(r)
}
