package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/scenarios"
)

// A run whose oracle does not exist (a linearized step so large that
// ρ(Ā) ≥ 1) completes and says so in summary.json and at its end, with
// no relative error against a solve its estimator's sums never approach.
func TestRunWithoutOracleSaysWhy(t *testing.T) {
	sc, err := scenarios.Load("testdata/golden/exact-fixu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Hypergradient.LR = 50
	sc.Runtime.Driver = "sequential"
	dir := t.TempDir()
	var warned []string
	sum, err := Execute(context.Background(), sc, Options{OutDir: dir, Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	hs := sum.Hypergradient
	if hs == nil || hs.OracleRelError != nil || !strings.Contains(hs.NoOracle, "spectral radius of Ā is") {
		t.Fatalf("hypergradient summary %+v, want no oracle and why", hs)
	}
	b, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if err != nil || !strings.Contains(string(b), `"no_oracle": "fixed-point oracle does not exist`) || strings.Contains(string(b), "oracle_rel_error") {
		t.Errorf("summary.json does not say there is no oracle (%v):\n%s", err, b)
	}
	if len(warned) == 0 || !strings.Contains(strings.Join(warned, "\n"), "no oracle") {
		t.Errorf("warnings %q do not say there is no oracle", warned)
	}
}
