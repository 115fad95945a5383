package datasets

import (
	"math"
	"testing"
)

// GatherAs writes Gather's bits for float64 and those bits rounded once
// for float32, on float64 and coded rows alike.
func TestGatherAs(t *testing.T) {
	plain := &Dataset{X: []float64{0.1, 0.2, 1.0 / 3, 4, 5e-9, -6}, Y: []int{0, 1, 0}, N: 3, D: 2, C: 2}
	coded := &Dataset{Codes: []uint8{0, 17, 255, 3, 128, 7}, Levels: byteLevels(), Y: []int{0, 1, 0}, N: 3, D: 2, C: 2}
	idx := []int{2, 0, 2}
	for _, d := range []*Dataset{plain, coded} {
		want := make([]float64, len(idx)*d.D)
		d.Gather(want, idx)
		got64 := make([]float64, len(want))
		GatherAs(d, got64, idx)
		got32 := make([]float32, len(want))
		GatherAs(d, got32, idx)
		for i, w := range want {
			if math.Float64bits(got64[i]) != math.Float64bits(w) || got32[i] != float32(w) {
				t.Errorf("coded=%v element %d: GatherAs gives %v, %v; Gather %v", d.Coded(), i, got64[i], got32[i], w)
			}
		}
		wantR := make([]float64, 2*d.D)
		d.GatherRange(wantR, 1, 3)
		gotR := make([]float32, len(wantR))
		GatherRangeAs(d, gotR, 1, 3)
		for i, w := range wantR {
			if gotR[i] != float32(w) {
				t.Errorf("coded=%v element %d: GatherRangeAs gives %v, GatherRange %v", d.Coded(), i, gotR[i], w)
			}
		}
	}
	for name, f := range map[string]func(){
		"short dst":   func() { GatherAs(plain, make([]float32, 3), idx) },
		"bad index":   func() { GatherAs(plain, make([]float32, 2), []int{3}) },
		"bad range":   func() { GatherRangeAs(plain, make([]float32, 8), 0, 4) },
		"short range": func() { GatherRangeAs(plain, make([]float32, 1), 0, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
