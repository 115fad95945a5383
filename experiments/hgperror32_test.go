package experiments

import (
	"context"
	"math"
	"testing"
)

// With precision: float32 the experiment runs SGP and VR-HGP in float32
// against the float64 oracle at the float32 iterate widened: every error
// differs from the float64 run's (it does compute in float32), by no more
// than float32 rounding moves a stochastic error (relative 1e-3; measured
// 3e-6 and 6e-6 here, up to 2e-4 over the shipped scenario's pairs at 5
// seeds, M = 500), at both linearization points.
func TestHGPErrorFloat32(t *testing.T) {
	for _, at := range []string{"last", "fixed-point"} {
		var errs [2][][]float64
		for k, precision := range []string{"float64", "float32"} {
			sc := tinyHGPError(t)
			spec(sc).M, spec(sc).Linearize, spec(sc).OracleGap = 20, at, false
			sc.SGP.Rounds, sc.Precision = 100, precision
			if err := sc.Validate(); err != nil {
				t.Fatal(err)
			}
			got, err := hgpErrorOne(context.Background(), sc, spec(sc), testEnv(t, sc), "stochastic-directed", 2, nil)
			if err != nil || got.skip != nil {
				t.Fatalf("%s at %s: %v (skipped: %v)", precision, at, err, got.skip)
			}
			errs[k] = got.errors
		}
		same, worst := 0, 0.0
		for p := range errs[0] {
			for m, e64 := range errs[0][p] {
				e32 := errs[1][p][m]
				if e32 == e64 {
					same++
				}
				worst = max(worst, math.Abs(e32-e64)/e64)
			}
		}
		t.Logf("%s: largest relative difference %.3g, %d errors identical", at, worst, same)
		if !(worst < 1e-3) {
			t.Errorf("%s: float32 errors differ from float64's by up to %.3g (relative)", at, worst)
		}
		if same > len(errs[0])*len(errs[0][0])/2 {
			t.Errorf("%s: %d of the float32 errors equal float64's: the run did not compute in float32", at, same)
		}
	}
}
