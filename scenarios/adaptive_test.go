package scenarios_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// The shipped adaptive server steps run from their files on both drivers
// with the same metrics, byte for byte, and differ from FedAvg's on the
// same data and clients.
func TestAdaptiveScenariosOnBothDrivers(t *testing.T) {
	metrics := func(file, driver string) []byte {
		t.Helper()
		sc, err := scenarios.Load(filepath.Join("paper", file))
		if err != nil {
			t.Fatal(err)
		}
		sc.Runtime.Driver = driver
		dir := t.TempDir()
		if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
			t.Fatalf("%s on %s: %v", file, driver, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	avg := metrics("adaptive-fedavg.yaml", "sequential")
	for _, kind := range []string{"fedadam", "fedyogi", "fedadagrad"} {
		file := "adaptive-" + kind + ".yaml"
		seq, act := metrics(file, "sequential"), metrics(file, "actors")
		if len(seq) == 0 || !bytes.Equal(seq, act) {
			t.Errorf("%s: the sequential and actor drivers disagree", file)
		}
		if bytes.Equal(seq, avg) {
			t.Errorf("%s: the same metrics as FedAvg's", file)
		}
	}
}
