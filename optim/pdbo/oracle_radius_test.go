package pdbo

import (
	"errors"
	"math"
	"testing"
)

// withLR returns lins with step lr.
func withLR(lins []Linearization[float64], lr float64) []Linearization[float64] {
	out := append([]Linearization[float64](nil), lins...)
	for i := range out {
		out[i].LR = lr
	}
	return out
}

// The power iteration's ρ(Ā) agrees with the eigenvalues' where both are
// computed (Ā of 400 rows), below and above 1.
func TestRadiusEstimateMatchesEigenvalues(t *testing.T) {
	p := newHyperProblemDim(t, net("stochastic-directed"), 4, 100, AfterComm, 0.1, 3)
	for _, lr := range []float64{0.01, 0.1, 0.3, 1, 5} {
		a, _, _, _ := expectedJacobians(withLR(p.lins, lr))
		exact, est := spectralRadius(a), radiusEstimate(a)
		t.Logf("step %g: ρ(Ā) = %.6g, estimated %.6g", lr, exact, est)
		if math.Abs(est-exact) > 0.02*exact || (exact < 1) != (est < 1) {
			t.Errorf("step %g: ρ(Ā) = %.6g, estimated %.6g", lr, exact, est)
		}
	}
}

// Past exactRadiusRows (Ā of 1,560 rows: four clients of 390 parameters,
// as a softmax ensemble), a step too large is reported as "no oracle",
// with ρ(Ā) ≥ 1, rather than a solve that HGP's diverging sums are
// compared with; a small step still gives the oracle.
func TestLargeOracleReportsDivergence(t *testing.T) {
	if testing.Short() {
		t.Skip("dense algebra on 1,560 rows")
	}
	p := newHyperProblemDim(t, net("stochastic-directed"), 4, 390, AfterComm, 0.1, 12)
	if rows := 4 * p.lins[0].Model.DimX(); rows != 1560 || rows <= exactRadiusRows {
		t.Fatalf("Ā has %d rows", rows)
	}
	if _, err := FixedPointOracle(p.lins); err != nil {
		t.Fatalf("at step 0.1 the oracle should exist: %v", err)
	}
	big := withLR(p.lins, 5)
	_, err := FixedPointOracle(big)
	var oe *OracleError
	if !errors.As(err, &oe) || oe.Singular || !oe.Estimated || !(oe.Radius >= 1) {
		t.Fatalf("step 5: want a diverging *OracleError with an estimated ρ ≥ 1, got %v", err)
	}
	// Independently of the estimate: the truncated Neumann sums blow up.
	if a, b := stackedNormOf(TruncatedOracle(big, 20)), stackedNormOf(TruncatedOracle(big, 40)); !(b > 100*a) {
		t.Errorf("ρ(Ā) ≈ %.3g reported, but ‖Σ_{m<40}‖ = %.3g is not ≫ ‖Σ_{m<20}‖ = %.3g", oe.Radius, b, a)
	}
	t.Logf("step 5: %v", err)
}
