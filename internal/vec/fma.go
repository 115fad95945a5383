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
// The product of two float32 values is exact in float64, but rounding the
// float64 sum to nearest and then to float32 rounds twice, and the second
// rounding can go the wrong way when the first lands on a float32
// midpoint. Rounding the sum to odd instead (inexact results take the
// neighbour with an odd last bit) makes the second rounding correct
// whenever the first keeps at least two more bits (Boldo and Melquiond,
// 2008); float64 keeps 29 more. The rounding error e of the float64 sum r
// is exact by Knuth's two-sum, and tells whether r is inexact and on which
// side of r the exact sum lies.
func FMA32(x, y, s float32) float32 {
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
