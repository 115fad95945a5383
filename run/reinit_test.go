package run

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/scenarios"
)

// reinitScenario is a PDBO run whose node 6 crashes at round 10 and comes
// back at round recover (counted across phases: SGP rounds 0–29, then the
// hyper-gradient rounds) with the given state.
func reinitScenario(t *testing.T, method, state string, recover int) scenarios.Scenario {
	t.Helper()
	src := "name: reinit\nseed: 21\nclients: 8\nmethod: " + method + "\nnetwork:\n  kind: stochastic-directed\n  failures:\n" +
		"    - {kind: crash, nodes: [6], at: 10, recover: " + itoa(recover) + ", state: " + state + "}\n" +
		"data: {classes: 3, features: 4, train: 20, val: 8, test: 8}\n" +
		"sgp: {rounds: 30, batch: 5, eval_every: 10, lr: {schedule: constant, base: 0.2}}\nhypergradient: {m: 6}\nouter: {steps: 2}\n"
	sc, err := scenarios.Parse("reinit.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func itoa(v int) string { b, _ := json.Marshal(v); return string(b) }

// clientLoss returns client i's training loss at round r of the outer
// step's SGP phase, from metrics.jsonl.
func clientLoss(t *testing.T, dir string, step, r, i int) float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, metricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var l struct {
			Outer, Round int
			Phase        string
			Client       any
			TrainLoss    float64 `json:"train_loss"`
		}
		if json.Unmarshal(line, &l) == nil && l.Phase == "sgp" && l.Outer == step && l.Round == r && l.Client == float64(i) {
			return l.TrainLoss
		}
	}
	t.Fatalf("no sgp line for client %d at step %d round %d", i, step, r)
	return 0
}

// A crash with state: reinit restarts the node from the initial
// parameters: nine rounds after its return its training loss is well
// above that of the node that continued (state: last). Both drivers
// give the same bits, and a run resumed from a checkpoint too.
func TestCrashReinit(t *testing.T) {
	run := func(sc scenarios.Scenario, driver string) string {
		t.Helper()
		sc.Runtime.Driver = driver
		dir := t.TempDir()
		if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	last := run(reinitScenario(t, "pdbo-da", "last", 20), "sequential")
	reinit := run(reinitScenario(t, "pdbo-da", "reinit", 20), "sequential")
	// Round 19: node 6 is offline (rounds 10–19) and keeps its state in
	// both; it returns at 20 and is evaluated at round 29.
	if a, b := clientLoss(t, last, 0, 19, 6), clientLoss(t, reinit, 0, 19, 6); a != b {
		t.Errorf("before it returns the node's loss differs: %v vs %v", a, b)
	}
	if a, b := clientLoss(t, last, 0, 29, 6), clientLoss(t, reinit, 0, 29, 6); !(b > 1.2*a) {
		t.Errorf("restarted at round 20, the node's loss at round 29 is %v; want well above %v (continued)", b, a)
	}
	actors := run(reinitScenario(t, "pdbo-da", "reinit", 20), "actors")
	for _, f := range []string{metricsFile} {
		a, _ := os.ReadFile(filepath.Join(reinit, f))
		b, _ := os.ReadFile(filepath.Join(actors, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the sequential and the actor driver", f)
		}
	}
	// Returning in the hyper-gradient phase (round 32) and in a later
	// step's SGP phase (round 50) also runs, the same on both drivers.
	for _, recover := range []int{32, 50} {
		sc := reinitScenario(t, "pdbo-da", "reinit", recover)
		a, _ := os.ReadFile(filepath.Join(run(sc, "sequential"), metricsFile))
		b, _ := os.ReadFile(filepath.Join(run(sc, "actors"), metricsFile))
		if !bytes.Equal(a, b) {
			t.Errorf("recover %d: metrics.jsonl differs between the drivers", recover)
		}
	}
	// Stopped after its first checkpoint (after the restart) and resumed:
	// the same bytes.
	dir := t.TempDir()
	sc := reinitScenario(t, "pdbo-da", "reinit", 20)
	sc.Runtime.Driver = "sequential"
	if stopped, _ := stopAt(t, sc, dir, 1, false); !stopped {
		t.Fatal("the run ended before its first checkpoint")
	}
	if _, err := Resume(context.Background(), ResumeOptions{Options: Options{OutDir: dir}}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(reinit, metricsFile))
	b, _ := os.ReadFile(filepath.Join(dir, metricsFile))
	if !bytes.Equal(a, b) {
		t.Error("resumed after a restart: metrics.jsonl differs")
	}
}

// A client that cannot restart refuses state: reinit before the run,
// naming the node and the option.
func TestCrashReinitRefused(t *testing.T) {
	src := "name: r\nclients: 5\nalgorithm: {kind: fedavg}\nnetwork:\n  kind: star\n  failures:\n    - {kind: crash, nodes: [0], at: 2, recover: 4, state: reinit}\n"
	sc, err := scenarios.Parse("r.yaml", []byte(src))
	if err != nil {
		t.Skipf("scenario: %v", err)
	}
	_, err = Build(sc)
	if err == nil || !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), "state: reinit") || !strings.Contains(err.Error(), "node 0") {
		t.Errorf("the federated server restarted: %v, want an input error naming node 0 and state: reinit", err)
	}
}

// A federated client restarted (state: reinit) waits for the server's next
// broadcast; the run differs from one where it kept its state only if
// that state mattered, and both drivers agree.
func TestCrashReinitFederated(t *testing.T) {
	var outs [][]byte
	for _, c := range []struct{ state, driver string }{{"reinit", "sequential"}, {"reinit", "actors"}, {"last", "sequential"}} {
		src := "name: r\nseed: 3\nclients: 5\nalgorithm: {kind: local-svrg}\nnetwork:\n  kind: star\n  failures:\n" +
			"    - {kind: crash, nodes: [2], at: 3, recover: 7, state: " + c.state + "}\n" +
			"data: {classes: 3, features: 4, train: 20, val: 8, test: 8}\nruntime: {driver: " + c.driver + "}\n"
		sc, err := scenarios.Parse("r.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, metricsFile))
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("metrics.jsonl differs between the drivers")
	}
	if bytes.Equal(outs[0], outs[2]) {
		t.Error("a Sticky client (local-svrg) restarted at round 7 gave the same run as one that kept its model")
	}
}
