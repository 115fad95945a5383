package run

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"hgpsim/optim"
)

// Non-finite values become null, the value is left as it was, and a
// summary of a run whose hyper-gradient overflowed encodes.
func TestMarshalFinite(t *testing.T) {
	rel := math.NaN()
	sum := &Summary{Name: "x", Traffic: map[string]optim.Traffic{}, Final: Aggregate{Consensus: math.Inf(1), TrainLoss: 2, TrainClients: 1, XClients: 2},
		Hypergradient: &HypergradientSummary{Norm: math.Inf(1), OracleRelError: &rel},
		Outer:         []OuterRecord{{Step: 0, HypergradientNorm: math.Inf(-1)}, {Step: 1, HypergradientNorm: 3}}}
	b, err := MarshalFinite(sum)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	final := back["final"].(map[string]any)
	if final["consensus"] != nil || final["train_loss"] != 2.0 {
		t.Errorf("final = %v", final)
	}
	hs := back["hypergradient"].(map[string]any)
	if hs["norm"] != nil || hs["oracle_rel_error"] != nil {
		t.Errorf("hypergradient = %v", hs)
	}
	if strings.Count(string(b), "null") != 4 {
		t.Errorf("want 4 nulls:\n%s", b)
	}
	if !math.IsInf(sum.Final.Consensus, 1) || !math.IsNaN(*sum.Hypergradient.OracleRelError) || !math.IsInf(sum.Outer[0].HypergradientNorm, -1) {
		t.Error("MarshalFinite changed its argument")
	}
	if n := stackedNorm([][]float64{{1e200, 1e200}, {1e200}}); math.IsInf(n, 0) || math.Abs(n/1e200-math.Sqrt(3)) > 1e-12 {
		t.Errorf("stacked norm of 1e200s = %v, want √3·1e200", n)
	}
}
