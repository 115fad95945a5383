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
// The product of two float32 values is exact in float64, but the sum with
// s rounded to float64 and then to float32 would round twice, and the
// second rounding can go the wrong way when the first lands exactly halfway
// between two float32 values. So the float64 sum r keeps its rounding error
// e (r + e is exact, by Knuth's two-sum), and e decides the direction when r
// is such a midpoint. When r is not a midpoint the two roundings agree:
// every float32 midpoint is a float64 value, so r and the exact sum lie on
// the same side of each.
func FMA32(x, y, s float32) float32 {
	p := float64(x) * float64(y)
	c := float64(s)
	r := p + c
	f := float32(r)
	if math.IsInf(r, 0) || math.IsNaN(r) {
		// x·y or s is infinite or NaN (a float32 product or sum cannot
		// overflow float64), so r is the exact result.
		return f
	}
	b := r - p
	e := (p - (r - b)) + (c - b)
	if e == 0 {
		return f
	}
	var d, half float64 // r's distance above f, and half the float32 gap that way
	if math.IsInf(float64(f), 0) {
		// r rounded past the largest float32: r is at or beyond the
		// midpoint between it and 2^128.
		top := math.Copysign(math.MaxFloat32, r)
		d, half = r-top, math.Copysign(math.Ldexp(1, 103), r)
		f = float32(top)
	} else {
		d = r - float64(f)
		if d == 0 {
			return f
		}
		half = (float64(math.Nextafter32(f, float32(math.Copysign(math.Inf(1), d)))) - float64(f)) / 2
	}
	if d != half {
		return float32(r)
	}
	// r is a midpoint; f is its even neighbour. The exact sum lies beyond
	// r (away from f) when e has d's sign, and then rounds to the other
	// neighbour.
	if (e > 0) == (d > 0) {
		return math.Nextafter32(f, float32(math.Copysign(math.Inf(1), d)))
	}
	return f
}
