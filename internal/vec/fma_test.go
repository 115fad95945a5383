package vec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Exact is x·y + s rounded once to float32 by big.Float: the
// reference FMA32 must match.
func fma32Exact(x, y, s float32) float32 {
	for _, v := range [3]float32{x, y, s} {
		if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
			// The result is infinite or NaN, and float64 gets it right.
			return float32(float64(x)*float64(y) + float64(s))
		}
	}
	var p, t big.Float
	p.SetPrec(200).Mul(big.NewFloat(float64(x)), big.NewFloat(float64(y)))
	t.SetPrec(200).Add(&p, big.NewFloat(float64(s)))
	f, _ := t.Float32()
	if f == 0 {
		// big.Float has no signed zero for an exact zero sum; IEEE gives
		// +0 under round-to-nearest unless both addends are -0.
		return float32(float64(x)*float64(y) + float64(s))
	}
	return f
}

// fmaHardCases returns triples near float32 midpoints: s has an odd last
// bit and x·y is ± half of s's last place times (1 − 2^-46), which float64
// rounds to the midpoint just below or above s while the exact sum lies on
// s's side (rounding once gives s, rounding twice its even neighbour); and
// times (1 ± 2^-22 + 2^-46), sums off the midpoint that both get right.
func fmaHardCases(r *rand.Rand, n int) [][3]float32 {
	var out [][3]float32
	for len(out) < n {
		s := math.Float32frombits(r.Uint32()&^0x80000000 | 1)
		if math.IsInf(float64(s), 0) || math.IsNaN(float64(s)) || s < 1e-30 {
			continue
		}
		_, e := math.Frexp(float64(s))
		h := float32(math.Ldexp(1, e-25)) // half of s's last place
		lo, hi := float32(1-0x1p-23), float32(1+0x1p-23)
		for _, xy := range [][2]float32{{lo, hi}, {hi, hi}, {lo, lo}} {
			x, y := xy[0]*h, xy[1]
			if r.IntN(2) == 0 {
				x, s = -x, -s
			}
			out = append(out, [3]float32{x, y, s}, [3]float32{-x, y, s})
		}
	}
	return out
}

func TestFMA32MatchesExactRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := fmaHardCases(r, 3000)
	// Random bit patterns over every exponent, and values near one
	// another's magnitude (cancellation), subnormal and near overflow.
	for range 200000 {
		x := math.Float32frombits(r.Uint32())
		y := math.Float32frombits(r.Uint32())
		s := math.Float32frombits(r.Uint32())
		cases = append(cases, [3]float32{x, y, s})
		a := float32(r.NormFloat64())
		b := float32(r.NormFloat64())
		cases = append(cases, [3]float32{a, b, -float32(float64(a) * float64(b))})
		cases = append(cases, [3]float32{a * 0x1p-70, b * 0x1p-70, float32(r.NormFloat64()) * 0x1p-140})
		cases = append(cases, [3]float32{a * 0x1p63, b * 0x1p64, float32(r.NormFloat64()) * 0x1p127})
	}
	cases = append(cases,
		[3]float32{math.MaxFloat32, 1, math.MaxFloat32},
		[3]float32{math.MaxFloat32, -1, math.MaxFloat32},
		// Midpoints between the largest float32 and 2^128.
		[3]float32{0x1p103 * (1 - 0x1p-23), 1 + 0x1p-23, math.MaxFloat32},
		[3]float32{0x1p103 * (1 + 0x1p-23), 1 + 0x1p-23, math.MaxFloat32},
		[3]float32{-0x1p103 * (1 - 0x1p-23), 1 + 0x1p-23, -math.MaxFloat32},
		[3]float32{float32(math.Copysign(0, -1)), 1, float32(math.Copysign(0, -1))},
		[3]float32{float32(math.Inf(1)), 0, 1},
		[3]float32{float32(math.Inf(1)), 1, float32(math.Inf(-1))},
	)
	// Ties in float32's subnormal range, where its last place is 2^-149
	// whatever the exponent.
	for range 1000 {
		s := float32(2*r.IntN(1<<22)+1) * 0x1p-149
		x, y := float32(0x1p-75*(1-0x1p-23)), float32(0x1p-75*(1+0x1p-23))
		cases = append(cases, [3]float32{x, y, s}, [3]float32{-x, y, s}, [3]float32{x, y, -s})
	}
	// Exact ties: the sum is a float32 midpoint and needs no float64
	// rounding, so it goes to the even neighbour.
	for range 1000 {
		s := float32(2*r.IntN(1<<22)+(1<<23)+1) * 0x1p-23 // odd, in [1, 2)
		h := float32(0x1p-24)
		cases = append(cases, [3]float32{h, 1, s}, [3]float32{-h, 1, s}, [3]float32{h, -1, -s})
		k := float32(2*r.IntN(1<<21) + 1) // odd: a subnormal's last place 2^-149
		cases = append(cases, [3]float32{0x1p-75, 0x1p-75, k * 0x1p-149}, [3]float32{-0x1p-75, 0x1p-75, -k * 0x1p-149})
	}
	// Subnormal sums one float64 place below a float32 midpoint: the float64
	// sum has an odd last bit and must stay where it is (rounding to odd);
	// one step up would land on the midpoint and round to the even side.
	// s in [2^-127, 2^-126) has float64 places of 2^-179; the product is
	// 2^-150·(1 − 131044·2^-46), 0.9998 of a place short of half of s's last
	// float32 place.
	for range 1000 {
		s := float32(2*r.IntN(1<<21)+(1<<22)+1) * 0x1p-149
		x, y := float32(0x1p-75*(1+362*0x1p-23)), float32(0x1p-75*(1-362*0x1p-23))
		cases = append(cases, [3]float32{x, y, s}, [3]float32{-x, y, -s})
	}
	bad := 0
	for _, c := range cases {
		got, want := FMA32(c[0], c[1], c[2]), fma32Exact(c[0], c[1], c[2])
		if math.IsNaN(float64(want)) != math.IsNaN(float64(got)) ||
			!math.IsNaN(float64(want)) && math.Float32bits(got) != math.Float32bits(want) {
			if bad++; bad <= 5 {
				t.Errorf("FMA32(%x, %x, %x) = %x, want %x", c[0], c[1], c[2], got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d wrong", bad, len(cases))
	}
}

// The hard cases are hard: rounding twice gets many of them wrong, so the
// test above would catch an FMA32 that did.
func TestFMA32HardCasesDefeatDoubleRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	wrong := 0
	cases := fmaHardCases(r, 300)
	for _, c := range cases {
		twice := float32(float64(c[0])*float64(c[1]) + float64(c[2]))
		if twice != fma32Exact(c[0], c[1], c[2]) {
			wrong++
		}
	}
	if wrong < len(cases)/4 {
		t.Fatalf("rounding twice is wrong on only %d of %d hard cases", wrong, len(cases))
	}
}

func TestFMAFloat64IsMathFMA(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		x, y, s := r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		if got := FMA(x, y, s); got != math.FMA(x, y, s) {
			t.Fatalf("FMA(%v, %v, %v) = %v, want %v", x, y, s, got, math.FMA(x, y, s))
		}
		if got, want := FMA(float32(x), float32(y), float32(s)), FMA32(float32(x), float32(y), float32(s)); got != want {
			t.Fatalf("FMA[float32] = %v, FMA32 = %v", got, want)
		}
	}
}
