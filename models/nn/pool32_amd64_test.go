package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The float32 2×2 max pool kernel selects what the Go tournament selects,
// value and offset, on inputs rich in ties (signed zeros, repeated
// values), infinities and NaNs, for output widths 1 to 21 (the kernel's
// eight- and four-window steps and the Go tail, planes of whole rows in
// one call), three output rows, and odd input widths and heights.
func TestMaxPool2Rows32MatchesGoLoop(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(7, 1))
	for wo := 1; wo <= 21; wo++ {
		for _, extra := range []int{0, 1} {
			in := Shape{2, 6 + extra, 2*wo + extra}
			l, err := newPool[float32](MaxPool2D(2, 2), in)
			if err != nil {
				t.Fatal(err)
			}
			const n = 2
			pl := l.(*pool[float32])
			pl.reserve(n)
			x := special32(r, n*in.Size())
			for i := range x {
				switch r.IntN(6) {
				case 0, 1: // ties
					x[i] = x[r.IntN(i+1)]
				case 2: // −0 against +0: a tie that + 0 settles
					x[i] = float32(math.Copysign(0, float64(r.IntN(2)-1)))
				}
			}
			var want, got []float32
			var wantArg []int32
			for _, vector := range []bool{false, true} {
				patchVector = vector
				y := special32(r, n*pl.out().Size())
				pl.forward(y, x, nil, n)
				if !vector {
					want, wantArg = y, append([]int32(nil), pl.arg...)
					continue
				}
				got = y
			}
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("%v: output %d is %x with the kernel, %x without", in, i,
					math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
			for i, a := range pl.arg {
				if a != wantArg[i] {
					t.Fatalf("%v: offset %d is %d with the kernel, %d without", in, i, a, wantArg[i])
				}
			}
		}
	}
}

// The float32 scatter of a 2×2 pool that tiles its planes stores what
// clearing and storing 0 + gy gives, bit for bit (−0 gradients become
// +0), on output widths 1 to 21 (the kernel's eight- and four-window
// steps and the Go tail), with the choices of a forward pass over inputs
// rich in ties and gradients with special values and NaNs; planes of odd
// sizes take the clearing path.
func TestScatterPool2Rows32MatchesGoLoop(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(7, 4))
	for wo := 1; wo <= 21; wo++ {
		for _, extra := range []int{0, 1} {
			in := Shape{3, 4 + 2*extra, 2*wo + extra}
			l, err := newPool[float32](MaxPool2D(2, 2), in)
			if err != nil {
				t.Fatal(err)
			}
			const n = 2
			pl := l.(*pool[float32])
			pl.reserve(n)
			x := special32(r, n*in.Size())
			for i := range x {
				if r.IntN(3) == 0 {
					x[i] = x[r.IntN(i+1)]
				}
			}
			pl.forward(make([]float32, n*pl.out().Size()), x, nil, n)
			gy := nans32(r, n*pl.out().Size())
			for i := range gy {
				if r.IntN(4) == 0 {
					gy[i] = float32(math.Copysign(0, -1))
				}
			}
			var want []float32
			for _, vector := range []bool{false, true} {
				patchVector = vector
				gx := nans32(r, n*in.Size())
				pl.scatter(gx, gy, n)
				if !vector {
					want = gx
					continue
				}
				if i := sameBits32(gx, want); i >= 0 {
					t.Fatalf("%v: gradient %d is %x with the kernel, %x without", in, i,
						math.Float32bits(gx[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}
