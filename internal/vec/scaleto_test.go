package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// ScaleTo gives floats.ScaleTo's bits in float64 and, in float32, the
// product of c and the widened value rounded once; it works in place and
// panics on lengths that differ.
func TestScaleTo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const c = 1 / 3.0
	s := make([]float64, 37)
	for i := range s {
		s[i] = r.NormFloat64() * 1e3
	}
	want, got := make([]float64, len(s)), make([]float64, len(s))
	floats.ScaleTo(want, c, s)
	ScaleTo(got, c, s)
	for i := range s {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("float64 [%d]: %v, floats.ScaleTo %v", i, got[i], want[i])
		}
	}
	s32 := make([]float32, len(s))
	for i, v := range s {
		s32[i] = float32(v)
	}
	in := append([]float32(nil), s32...)
	ScaleTo(s32, c, s32)
	for i, v := range in {
		if w := float32(c * float64(v)); math.Float32bits(s32[i]) != math.Float32bits(w) {
			t.Fatalf("float32 in place [%d]: %v, want %v", i, s32[i], w)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("ScaleTo of lengths 2 and 3 did not panic")
		}
	}()
	ScaleTo(make([]float32, 2), c, make([]float32, 3))
}
