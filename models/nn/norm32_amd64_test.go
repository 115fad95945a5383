package nn

import (
	"fmt"
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

			xh1, xh2 := make([]float32, n), make([]float32, n)
			normVector = true
			tangentXRun(r1, y1, rx, x, xh1, c[0], c[1], c[2], c[3], c[4], c[5], c[6])
			normVector = false
			tangentXRun(r2, y2, rx, x, xh2, c[0], c[1], c[2], c[3], c[4], c[5], c[6])
			check("tangentX x̂", n, xh1, xh2)
			check("tangentX R{x̂}", n, r1, r2)
			check("tangentX ry", n, y1, y2)
		}
	}
}

// The float32 forward statistics eight groups at a time give the scalar
// loops' bits (μ, s and the outputs, normVector off), on group sizes with
// and without a tail past the kernels' steps of four, batches whose
// groups are not a multiple of eight, and special values: signed zeros,
// subnormals, infinities and NaNs of distinct payloads in some groups,
// ordinary values (whose sums round, so that a change of order shows) in
// others.
func TestNormStats32MatchScalar(t *testing.T) {
	needAVX(t)
	defer func(v bool) { normVector = v }(normVector)
	r := rand.New(rand.NewPCG(9, 11))
	for _, c := range []struct {
		in   Shape
		g, n int
	}{
		{Shape{4, 5, 3}, 2, 11},
		{Shape{16, 6, 6}, 1, 9},
		{Shape{3, 3, 3}, 3, 5},
		{Shape{8, 24, 24}, 1, 8},
		{Shape{1, 1, 3}, 1, 17},
	} {
		l := testGroupNorm[float32](t, c.in, c.g, c.n)
		size := c.n * c.in.Size()
		x := make([]float32, size)
		for q := range c.n * c.g {
			v := x[q*l.m : (q+1)*l.m]
			fillGroup32(r, v, q)
		}
		w := special32(r, 2*c.in.C)
		var ys, mus, ss [2][]float32
		for k, vector := range []bool{false, true} {
			normVector = vector
			y := make([]float32, size)
			l.forward(y, x, w, c.n)
			ys[k] = y
			mus[k] = append([]float32(nil), l.mu[:c.n*c.g]...)
			ss[k] = append([]float32(nil), l.s[:c.n*c.g]...)
		}
		// Where two NaNs meet in the Go additions that finish a group's
		// sums, which payload survives is the compiler's choice of
		// operand order (as for addRowSums): a NaN μ or s of a group
		// need only be NaN, and so need its outputs.
		for q := range c.n * c.g {
			if mus[0][q] != mus[0][q] || ss[0][q] != ss[0][q] {
				for k := range 2 {
					canonNaN(mus[k][q:q+1], ss[k][q:q+1], ys[k][q*l.m:(q+1)*l.m])
				}
			}
		}
		where := fmt.Sprintf("%v, %d groups, batch %d", c.in, c.g, c.n)
		sameBitsNamed(t, where, "μ", mus, "s", ss, "y", ys)
	}
}

// The float32 tangent pass eight groups at a time (rforward8x32: the
// transposing sums, then x̂, R{x̂} and ry formed from x) gives the bits of
// the scalar passes (normVector off): outputs, x̂, R{x̂} and mean(x̂ rx),
// on group sizes with and without a tail past the kernel's steps of
// sixteen, batches whose groups are not a multiple of eight, and special
// values (NaN-carrying groups compared as for the forward statistics).
func TestNormRForward32MatchesScalar(t *testing.T) {
	needAVX(t)
	defer func(v bool) { normVector = v }(normVector)
	r := rand.New(rand.NewPCG(9, 12))
	for _, c := range []struct {
		in   Shape
		g, n int
	}{
		{Shape{4, 5, 3}, 2, 11},
		{Shape{16, 6, 6}, 1, 9},
		{Shape{3, 3, 3}, 3, 5},
		{Shape{4, 8, 8}, 1, 8},
		{Shape{2, 7, 9}, 2, 9},
	} {
		l := testGroupNorm[float32](t, c.in, c.g, c.n)
		size, ng := c.n*c.in.Size(), c.n*c.g
		x, rx := make([]float32, size), make([]float32, size)
		for q := range ng {
			for _, v := range [][]float32{x[q*l.m : (q+1)*l.m], rx[q*l.m : (q+1)*l.m]} {
				fillGroup32(r, v, q)
			}
		}
		w, u := special32(r, 2*c.in.C), special32(r, 2*c.in.C)
		var ys, xh, rxh, as [2][]float32
		for k, vector := range []bool{false, true} {
			normVector = vector
			l.forward(make([]float32, size), x, w, c.n)
			y := nans32(r, size)
			l.rforward(y, rx, x, nil, w, u, c.n)
			ys[k], as[k] = y, append([]float32(nil), l.a[:ng]...)
			xh[k], rxh[k] = append([]float32(nil), l.xhat[:size]...), append([]float32(nil), l.rxhat[:size]...)
		}
		for q := range ng {
			if as[0][q] == as[0][q] {
				continue
			}
			// A NaN mean(x̂ rx): which payload the Go tail's additions keep
			// is the compiler's choice, and it reaches R{x̂} and ry.
			for k := range 2 {
				canonNaN(as[k][q:q+1], ys[k][q*l.m:(q+1)*l.m], rxh[k][q*l.m:(q+1)*l.m])
			}
		}
		where := fmt.Sprintf("%v, %d groups, batch %d", c.in, c.g, c.n)
		sameBitsNamed(t, where, "a", as, "x̂", xh, "R{x̂}", rxh, "ry", ys)
	}
}

// The float32 tangent backward pass eight groups at a time
// (rbackward8x32: the transposing sums, then gx and R{gx} with h and R{h}
// formed again) gives the bits of the group-by-group loop (normLanes off):
// gx (or none), R{gx} and the parameters' R-gradients, on group sizes and
// planes with and without a tail past the kernel's steps of eight,
// batches whose groups are not a multiple of eight, and special values
// (NaN-carrying groups compared as for the forward statistics).
func TestNormRBackward32MatchesScalar(t *testing.T) {
	needAVX(t)
	if !normLanes {
		t.Skip("no AVX-512: the eight-group float32 tangent backward never runs here")
	}
	defer func(v bool) { normLanes = v }(normLanes)
	r := rand.New(rand.NewPCG(9, 14))
	for _, c := range []struct {
		in   Shape
		g, n int
	}{
		{Shape{4, 5, 3}, 2, 11},
		{Shape{16, 6, 6}, 1, 9},
		{Shape{3, 3, 3}, 3, 5},
		{Shape{4, 8, 8}, 1, 8},
		{Shape{2, 7, 9}, 2, 9},
	} {
		l := testGroupNorm[float32](t, c.in, c.g, c.n)
		size, ng := c.n*c.in.Size(), c.n*c.g
		x, rx := make([]float32, size), make([]float32, size)
		gy, rgy := make([]float32, size), make([]float32, size)
		for q := range ng {
			for _, v := range [][]float32{x[q*l.m : (q+1)*l.m], rx[q*l.m : (q+1)*l.m], gy[q*l.m : (q+1)*l.m], rgy[q*l.m : (q+1)*l.m]} {
				fillGroup32(r, v, q)
			}
		}
		w, u := special32(r, 2*c.in.C), special32(r, 2*c.in.C)
		w[0], u[1] = 1.5, -0.25 // finite parameters for the finite groups' channels
		l.forward(make([]float32, size), x, w, c.n)
		l.rforward(make([]float32, size), rx, x, nil, w, u, c.n)
		gw0 := special32(r, 2*c.in.C)
		for _, withGx := range []bool{true, false} {
			var gxs, rgxs, gws [2][]float32
			for k, lanes := range []bool{false, true} {
				normLanes = lanes
				var gx []float32
				if withGx {
					gx = nans32(r, size)
				}
				rgx, gw := nans32(r, size), append([]float32(nil), gw0...)
				l.rbackward(gx, rgx, gw, gy, rgy, x, rx, nil, nil, w, u, c.n)
				gxs[k], rgxs[k], gws[k] = gx, rgx, gw
			}
			// Where a group carries NaNs, which payload its sums keep
			// where two meet in the Go loops is the compiler's choice.
			for q := range ng {
				nan := false
				for i := q * l.m; i < (q+1)*l.m; i++ {
					if x[i] != x[i] || rx[i] != rx[i] || gy[i] != gy[i] || rgy[i] != rgy[i] {
						nan = true
					}
				}
				for k := range 2 {
					if nan && gxs[k] != nil {
						canonNaN(gxs[k][q*l.m : (q+1)*l.m])
					}
					if nan {
						canonNaN(rgxs[k][q*l.m : (q+1)*l.m])
					}
					canonNaN(gws[k])
				}
			}
			where := fmt.Sprintf("%v, %d groups, batch %d, gx %v", c.in, c.g, c.n, withGx)
			sameBitsNamed(t, where, "gx", gxs, "R{gx}", rgxs, "R{gw}", gws)
		}
	}
}

// canonNaN replaces every NaN of vs by one NaN: where a group carries
// NaNs, which payload survives where two meet in the Go additions is the
// compiler's choice of operand order, so only NaN-ness is compared.
func canonNaN(vs ...[]float32) {
	for _, v := range vs {
		for i, x := range v {
			if x != x {
				v[i] = float32(math.NaN())
			}
		}
	}
}

// sameBitsNamed fails the test at the first of the named pairs (name, [2]
// results: without the kernels, with them) whose bits differ.
func sameBitsNamed(t *testing.T, where string, pairs ...any) {
	t.Helper()
	for p := 0; p < len(pairs); p += 2 {
		what, v := pairs[p].(string), pairs[p+1].([2][]float32)
		if i := sameBits32(v[1], v[0]); i >= 0 {
			t.Fatalf("%s: %s[%d] = %x with the kernels, %x without", where, what, i,
				math.Float32bits(v[1][i]), math.Float32bits(v[0][i]))
		}
	}
}

// fillGroup32 fills group q's values v by q mod 3: NaNs of distinct
// payloads, special values (signed zeros, subnormals, infinities), or
// ordinary values whose sums round, so that a change of order shows.
func fillGroup32(r *rand.Rand, v []float32, q int) {
	switch q % 3 {
	case 0:
		copy(v, nans32(r, len(v)))
	case 1:
		copy(v, special32(r, len(v)))
	default:
		for i := range v {
			v[i] = float32(r.NormFloat64()*10 + 3)
		}
	}
}
