package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// validate refuses every scenario that run refuses for its structure, with
// the same message: each scenario below is refused by both with exit code
// 2, naming the same reason.
func TestValidateRefusesWhatRunRefuses(t *testing.T) {
	trace, err := filepath.Abs("docs/links-example.csv") // 4 nodes, 20 rounds
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, body, msg string
	}{
		{"gilbert-elliott burst too short for δ̄ = 0.04", "clients: 20\nnetwork:\n  kind: stochastic-directed\n  delta_min: 0.04\n  delta_max: 0.2\n  links: {kind: gilbert-elliott, mean_burst: 20}\nsgp: {rounds: 5}\n",
			"needs mean_burst ≥"},
		{"gilbert-elliott burst too short for δ̄ = 0.01", "clients: 20\nnetwork:\n  kind: stochastic-directed\n  delta_min: 0.01\n  delta_max: 0.2\n  links: {kind: gilbert-elliott, mean_burst: 20}\nsgp: {rounds: 5}\n",
			"needs mean_burst ≥"},
		{"run longer than its trace", "clients: 4\nnetwork: {kind: stochastic-directed, links: {kind: trace, file: " + trace + ", end: fail}}\nsgp: {rounds: 30, eval_every: 10}\n",
			"the run takes 30 communication rounds, more than the 20"},
		{"pdbo longer than its trace", "clients: 4\nmethod: pdbo-da\nnetwork: {kind: stochastic-directed, links: {kind: trace, file: " + trace + ", end: fail}}\nsgp: {rounds: 8}\nhypergradient: {m: 2}\nouter: {steps: 2}\n",
			"communication rounds, more than the 20"},
		{"disconnected", "clients: 3\nnetwork:\n  kind: edge-list\n  symmetric: true\n  edges: [{from: 0, to: 1, prob: 1}]\n", "strongly connected"},
		{"delta outside", "network:\n  delta_min: 1.2\n", "delta_min"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := write(t, "s.yaml", c.body)
			for _, args := range [][]string{{"validate", file}, {"run", file, "--out", t.TempDir()}} {
				var out, errb bytes.Buffer
				code := runCLI(args, &out, &errb)
				if code != 2 || !strings.Contains(errb.String(), c.msg) {
					t.Errorf("%s: exit %d, %q; want 2 and %q", args[0], code, errb.String(), c.msg)
				}
			}
		})
	}
	// The same trace suffices for a run that ends with it.
	file := write(t, "ok.yaml", "clients: 4\nnetwork: {kind: stochastic-directed, links: {kind: trace, file: "+trace+", end: fail}}\nsgp: {rounds: 20, eval_every: 10}\n")
	for _, args := range [][]string{{"validate", file}, {"run", file, "--out", t.TempDir()}} {
		var out, errb bytes.Buffer
		if code := runCLI(args, &out, &errb); code != 0 {
			t.Errorf("%s of a run as long as its trace: exit %d: %s", args[0], code, errb.String())
		}
	}
}
