package scenarios_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"hgpsim/optim/fed"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// The shipped FedProx scenario runs from its file on both drivers with the
// same metrics, byte for byte, and its mu changes them.
func TestFedProxScenarioOnBothDrivers(t *testing.T) {
	sc, err := scenarios.Load("fedprox.yaml")
	if err != nil {
		t.Fatal(err)
	}
	metrics := func(driver string, mu float64) []byte {
		t.Helper()
		sc.Runtime.Driver = driver
		sc.Algorithm.Params.(*fed.FedProx).Mu = mu
		dir := t.TempDir()
		if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
			t.Fatalf("%s: %v", driver, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	seq, act := metrics("sequential", 0.1), metrics("actors", 0.1)
	if len(seq) == 0 || !bytes.Equal(seq, act) {
		t.Fatal("the sequential and actor drivers disagree")
	}
	if bytes.Equal(seq, metrics("sequential", 0)) {
		t.Error("mu = 0 gives the same metrics as mu = 0.1")
	}
}
