package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// copyDir copies the files of folder src into a new folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestResumeMidPhaseOverWorkers stops an in-process run at a checkpoint
// taken inside its SGP phase (a run without an outer loop is checkpointed
// only between the parts of that phase, whose delivery record the parts
// continue) and resumes it over 1, 2 and 8 worker processes: each gives
// the metrics.jsonl and summary.json of the run that never stopped.
func TestResumeMidPhaseOverWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts worker processes")
	}
	bin := buildBinary(t)
	scenario, ref, _ := referenceRun(t, bin, "name: ck\nclients: 8\nmethod: sgp\nsgp:\n  rounds: 200\n  eval_every: 10\nruntime:\n  round_timeout: 10s\n")
	sc, err := scenarios.Load(scenario)
	if err != nil {
		t.Fatal(err)
	}
	stopped := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	checkpoints := 0
	_, err = run.Execute(ctx, sc, run.Options{OutDir: stopped, Checkpointed: func(run.CheckpointInfo) {
		checkpoints++
		if checkpoints == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the run was not stopped at its second checkpoint (%d taken): %v", checkpoints, err)
	}
	var addrs []string
	for range 8 {
		_, a := startWorker(t, bin)
		addrs = append(addrs, a)
	}
	for _, k := range []int{1, 2, 8} {
		out := copyDir(t, stopped)
		if msg, code := runBinary(t, bin, "resume", out, "--workers", strings.Join(addrs[:k], ",")); code != 0 {
			t.Fatalf("resume over %d workers: exit %d: %s", k, code, msg)
		}
		sameOutputs(t, ref, out)
	}
}
