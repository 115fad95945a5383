package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"hgpsim/internal/testscen"
)

const tinyPDBO = testscen.TinyPDBO

// A tiny PDBO run end to end through the actor runtime: the outer objective
// F̄(x(λ⁽ˢ⁾), λ⁽ˢ⁾) decreases over the outer steps, and the run is
// deterministic (bit-identical outputs on a second run and on the
// sequential driver).
func TestTinyPDBOThroughActors(t *testing.T) {
	sc := parseOK(t, tinyPDBO)
	dir1, dir2, dir3 := t.TempDir(), t.TempDir(), t.TempDir()
	sum, err := Execute(context.Background(), sc, Options{OutDir: dir1})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Outer) != 3 {
		t.Fatalf("got %d outer records, want 3 (λ⁽⁰⁾, λ⁽¹⁾, λ⁽²⁾)", len(sum.Outer))
	}
	f0, f2 := sum.Outer[0].OuterLoss, sum.Outer[2].OuterLoss
	t.Logf("outer objective: %.6f → %.6f → %.6f", f0, sum.Outer[1].OuterLoss, f2)
	if !(f0 > 0) || !(f2 < f0) {
		t.Errorf("outer objective did not decrease: %.6f → %.6f", f0, f2)
	}
	if sum.Outer[0].LambdaNorm != 0 || !(sum.Outer[2].LambdaNorm > 0) {
		t.Errorf("λ did not move from 0: norms %v, %v", sum.Outer[0].LambdaNorm, sum.Outer[2].LambdaNorm)
	}
	if _, err := Execute(context.Background(), sc, Options{OutDir: dir2}); err != nil {
		t.Fatal(err)
	}
	seq := sc
	seq.Runtime.Driver = "sequential"
	if _, err := Execute(context.Background(), seq, Options{OutDir: dir3}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"metrics.jsonl", "summary.json"} {
		a, _ := os.ReadFile(filepath.Join(dir1, f))
		b, _ := os.ReadFile(filepath.Join(dir2, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two identical runs", f)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dir1, "metrics.jsonl"))
	c, _ := os.ReadFile(filepath.Join(dir3, "metrics.jsonl"))
	if !bytes.Equal(a, c) {
		t.Error("metrics.jsonl differs between the actor and sequential drivers")
	}
}
