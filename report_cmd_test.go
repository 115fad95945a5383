package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sweep run again with the same command keeps its runs and writes the
// same tables; `hgpsim report` rebuilds them byte for byte from the run
// folders; a changed command is refused with exit code 2 naming the run
// folder's scenario.yaml; report refuses what is not a sweep's folder.
func TestSweepContinueAndReport(t *testing.T) {
	f := write(t, "s.yaml", "name: s\nclients: 4\nsgp:\n  rounds: 20\n  eval_every: 5\nruntime:\n  driver: sequential\n")
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", f, "--seeds", "1-2", "--methods", "sgp,local", "--out", dir, "--curves", "train_loss"}
	var stdout, stderr bytes.Buffer
	if code := runCLI(args, &stdout, &stderr); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr.String())
	}
	files := []string{"results.csv", "study.csv", "study.md", "test_acc.png", "curve-train_loss.png"}
	want := map[string][]byte{}
	for _, n := range files {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		want[n] = b
	}
	stderr.Reset()
	if code := runCLI(args, &stdout, &stderr); code != 0 || strings.Count(stderr.String(), "completed earlier, kept") != 4 {
		t.Fatalf("sweep again: exit %d, want 4 runs kept: %s", code, stderr.String())
	}
	for _, n := range files {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	stdout.Reset()
	if code := runCLI([]string{"report", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	for _, n := range files {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || !bytes.Equal(b, want[n]) {
			t.Errorf("%s rebuilt by report differs from the sweep's (%v)", n, err)
		}
	}
	if !bytes.Equal(stdout.Bytes(), want["study.md"]) {
		t.Errorf("report printed %q, want study.md", stdout.String())
	}
	stderr.Reset()
	changed := append(append([]string(nil), args...), "--set", "sgp.rounds=10")
	if code := runCLI(changed, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), filepath.Join(dir, "s-sgp-seed_1", "scenario.yaml")) {
		t.Errorf("changed scenario: exit %d, %q; want 2 naming the run's scenario.yaml", code, stderr.String())
	}
	stdout.Reset()
	if code := runCLI([]string{"report", dir}, &stdout, &stderr); code != 0 || !bytes.Equal(stdout.Bytes(), want["study.md"]) {
		t.Errorf("after a refused command the sweep's report changed (exit %d)", code)
	}
	for _, bad := range []string{filepath.Join(dir, "s-sgp-seed_1"), filepath.Join(dir, "missing")} {
		stderr.Reset()
		if code := runCLI([]string{"report", bad}, &stdout, &stderr); code != 2 {
			t.Errorf("report %s: exit %d (%s), want 2", bad, code, stderr.String())
		}
	}
}

// An experiment run again with the same command and --out keeps its
// finished runs and writes the same outputs; `hgpsim report` rebuilds them
// byte for byte, running nothing, and refuses (exit 2) while a run has not
// finished, naming it; a changed command is refused naming the run
// folder's scenario.yaml.
func TestExperimentContinueAndReport(t *testing.T) {
	f := write(t, "e.yaml", `name: e
seed: 1
clients: 3
network: {kind: stochastic-directed}
data: {kind: synthetic, classes: 2, features: 1, train: 20, val: 20, test: 1}
model: {kind: softmax, l2: 0.01}
sgp: {rounds: 40}
runtime: {driver: sequential}
experiment: {kind: hgp-error, networks: [stochastic-directed], pairs: [[1, 0], [0.5, 0.5]], seeds: 2, m: 8}
`)
	dir := filepath.Join(t.TempDir(), "exp")
	args := []string{"run", f, "--out", dir}
	var stdout, stderr bytes.Buffer
	if code := runCLI(args, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	files := []string{"error.csv", "error.png", "summary.json"}
	want := map[string][]byte{}
	for _, n := range files {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		want[n] = b
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string) {
		t.Helper()
		for _, n := range files {
			if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || !bytes.Equal(b, want[n]) {
				t.Errorf("%s: %s differs from the first run's (%v)", what, n, err)
			}
		}
	}
	if code := runCLI([]string{"report", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	same("report")
	run1 := filepath.Join(dir, "runs", "stochastic-directed-seed2")
	if err := os.Remove(filepath.Join(run1, "done.json")); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := runCLI([]string{"report", dir}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), run1) {
		t.Errorf("report with an unfinished run: exit %d, %q; want 2 naming %s", code, stderr.String(), run1)
	}
	if code := runCLI(args, &stdout, &stderr); code != 0 {
		t.Fatalf("run again: exit %d: %s", code, stderr.String())
	}
	same("run again")
	stderr.Reset()
	changed := append(append([]string(nil), args...), "--set", "sgp.rounds=30")
	if code := runCLI(changed, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), filepath.Join(dir, "runs", "stochastic-directed-seed1", "scenario.yaml")) {
		t.Errorf("changed scenario: exit %d, %q; want 2 naming the run's scenario.yaml", code, stderr.String())
	}
}
