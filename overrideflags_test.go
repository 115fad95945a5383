package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/scenarios"
)

// Overrides and grids are validated like files: a bad key or value is exit
// code 2 with a message naming the --set or --grid.
func TestOverrideErrorsNameTheFlag(t *testing.T) {
	good := write(t, "good.yaml", "name: cli\nclients: 4\nnetwork:\n  kind: stochastic-directed\nsgp:\n  rounds: 5\n  eval_every: 0\n")
	out := func() string { return filepath.Join(t.TempDir(), "out") }
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"set unknown key", []string{"run", good, "--set", "network.bogus=1", "--out", out()}, "--set network.bogus=1: unknown key"},
		{"set bad value", []string{"validate", good, "--set", "network.delta_min=abc"}, "--set network.delta_min=abc"},
		{"set out of range", []string{"validate", good, "--set", "network.delta_min=1.5"}, "--set network.delta_min=1.5"},
		{"set malformed", []string{"validate", good, "--set", "network.delta_min"}, "--set network.delta_min: want key.path=value"},
		{"set on sweep", []string{"sweep", good, "--set", "sgp.rounds=-1", "--out", out()}, "--set sgp.rounds=-1"},
		{"grid unknown key", []string{"sweep", good, "--grid", "network.bogus=1,2", "--out", out()}, "network.bogus=1 (from --grid)"},
		{"grid bad value", []string{"sweep", good, "--grid", "network.delta_min=0.2,2", "--out", out()}, "network.delta_min=2 (from --grid)"},
		{"grid malformed", []string{"sweep", good, "--grid", "network.delta_min", "--out", out()}, "--grid network.delta_min: want key.path=v1,v2"},
		{"grid repeated value", []string{"sweep", good, "--grid", "seed=1,1", "--out", out()}, `value "1" twice`},
		{"grid key twice", []string{"sweep", good, "--grid", "seed=1,2", "--grid", "seed=3", "--out", out()}, "on two axes"},
		{"seeds malformed", []string{"sweep", good, "--seeds", "5-1", "--out", out()}, "--seeds 5-1"},
		{"seed and seeds", []string{"sweep", good, "--seed", "3", "--seeds", "1-2", "--out", out()}, "--seed and --seeds"},
		{"unknown plot metric", []string{"sweep", good, "--plot", "speed", "--out", out()}, `--plot: unknown metric "speed"`},
		{"curve of a whole-run metric", []string{"sweep", good, "--curves", "bytes", "--out", out()}, "--curves"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runCLI(c.args, &stdout, &stderr); code != 2 {
				t.Fatalf("exit code %d, want 2; stderr: %s", code, stderr.String())
			}
			first := strings.SplitN(stderr.String(), "\n", 2)[0]
			if !strings.Contains(first, c.msg) {
				t.Errorf("first stderr line %q does not name %q", first, c.msg)
			}
		})
	}
}

// --set reaches the run: the resolved scenario.yaml carries the values.
func TestSetOverridesTheRun(t *testing.T) {
	good := write(t, "good.yaml", "name: cli\nclients: 4\nsgp:\n  rounds: 5\n  eval_every: 0\n")
	dir := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if code := runCLI([]string{"run", good, "--set", "sgp.rounds=7", "--set", "clients=5", "--out", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	sc, err := scenarios.Load(filepath.Join(dir, "scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.SGP.Rounds != 7 || sc.Clients != 5 {
		t.Errorf("resolved scenario has %d rounds and %d clients, want 7 and 5", sc.SGP.Rounds, sc.Clients)
	}
}

// A grid sweep from the command line writes the study files.
func TestSweepGridCommand(t *testing.T) {
	good := write(t, "good.yaml", "name: g\nclients: 4\nnetwork:\n  kind: stochastic-directed\nsgp:\n  rounds: 6\n  eval_every: 2\n")
	dir := filepath.Join(t.TempDir(), "study")
	var stdout, stderr bytes.Buffer
	args := []string{"sweep", good, "--grid", "network.delta_min=0.2,0.5", "--seeds", "1-2", "--plot", "test_acc,consensus",
		"--curves", "consensus", "--out", dir, "--jobs", "2"}
	if code := runCLI(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, f := range []string{"results.csv", "study.csv", "study.md", "test_acc.png", "consensus.png", "curve-consensus.png",
		"g-delta_min_0.5-seed_2/summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "results.md")); err == nil {
		t.Error("a grid sweep wrote the paper's table")
	}
	if !strings.Contains(stdout.String(), "| method | network.delta_min | runs | test_acc (%) | consensus |") {
		t.Errorf("stdout does not show study.md:\n%s", stdout.String())
	}
}
