package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// tinyOuter is a PDBO scenario with two outer steps that runs in
// milliseconds.
const tinyOuter = `name: tiny-outer
seed: 5
clients: 4
method: pdbo-da
network:
  kind: fully-connected
data:
  classes: 3
  features: 4
  train: 40
  val: 20
  test: 20
sgp:
  rounds: 20
  batch: 0
  eval_every: 10
  lr:
    schedule: constant
    base: 0.5
hypergradient:
  estimator: exact
  m: 10
outer:
  steps: 2
`

// The console names each evaluated round as metrics.jsonl does (outer
// step, phase, 0-based round), shows progress as done=k/total, gives the
// wall time a unit, and reports the best outer step and λ only for runs
// with an outer loop.
func TestConsoleMatchesMetrics(t *testing.T) {
	for _, c := range []struct {
		name, scenario string
		outer          bool
	}{
		{"plain", "name: plain\nclients: 4\nsgp:\n  rounds: 7\n  eval_every: 3\n", false},
		{"outer loop", tinyOuter, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			var out, errb bytes.Buffer
			if code := runCLI([]string{"run", write(t, "s.yaml", c.scenario), "--out", dir}, &out, &errb); code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, errb.String())
			}
			var console []string
			var finished map[string]string
			for _, line := range strings.Split(errb.String(), "\n") {
				if _, rest, ok := strings.Cut(line, " INF progress "); ok {
					f := fields(rest)
					if !c.outer && f["outer"] != "" {
						t.Errorf("outer step shown for a run without outer loop: %q", line)
					}
					console = append(console, f["outer"]+"/"+f["phase"]+"/"+f["round"]+" "+f["done"])
				}
				if _, rest, ok := strings.Cut(line, " INF run finished "); ok {
					finished = fields(rest)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			sgpRounds, hgpRounds := 7, 0
			if c.outer {
				sgpRounds, hgpRounds = 20, 10
			}
			var metrics []string
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var m struct {
					Outer  int    `json:"outer"`
					Phase  string `json:"phase"`
					Round  int    `json:"round"`
					Client any    `json:"client"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				if m.Client != "all" {
					continue
				}
				total := sgpRounds
				if m.Phase == "hypergradient" {
					total = hgpRounds
				}
				step := ""
				if c.outer {
					step = strconv.Itoa(m.Outer)
				}
				metrics = append(metrics, fmt.Sprintf("%s/%s/%d %d/%d", step, m.Phase, m.Round, m.Round+1, total))
			}
			if !slices.Equal(console, metrics) {
				t.Errorf("console progress\n  %q\ndiffers from metrics.jsonl\n  %q", console, metrics)
			}
			if finished == nil {
				t.Fatalf("no run finished line in\n%s", errb.String())
			}
			if _, err := time.ParseDuration(finished["wall"]); err != nil {
				t.Errorf("wall=%q is not a duration with a unit: %v", finished["wall"], err)
			}
			for _, k := range []string{"best_step", "best_test_acc", "lambda_norm", "outer_steps"} {
				if _, ok := finished[k]; ok != c.outer {
					t.Errorf("run finished has %s: %v, want %v (outer loop: %v)", k, ok, c.outer, c.outer)
				}
			}
			if c.outer && finished["outer_steps"] != "2" {
				t.Errorf("outer_steps=%q, want 2", finished["outer_steps"])
			}
		})
	}
}

// fields parses the key=value pairs of a console log line.
func fields(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Fields(s) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// On a terminal the bar shows the same round and done numbers as the log
// lines, and a log line after a bar starts on a line of its own.
func TestProgressBar(t *testing.T) {
	var w bytes.Buffer
	p := newProgressPrinter(newConsoleLog(&w), &w, true, true)
	agg := run.Aggregate{TrainLoss: 0.5, TestAcc: 0.8}
	p.event(optim.RoundEvent{Phase: "sgp", Round: 49}, agg, 600)
	if !strings.Contains(w.String(), "] outer 0 round 49 done 50/600 ") {
		t.Errorf("bar %q", w.String())
	}
	p.event(optim.RoundEvent{Phase: "hypergradient", Round: 9}, run.Aggregate{}, 10)
	lines := strings.Split(w.String(), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "INF progress phase=hypergradient outer=0 round=9 done=10/10") {
		t.Errorf("bar then log line: %q", w.String())
	}
	w.Reset()
	p.event(optim.RoundEvent{Phase: "sgp", Step: 1, Round: 9}, agg, 600) // the next outer step
	if !strings.Contains(w.String(), "] outer 1 round 9 done 10/600 ") {
		t.Errorf("bar in the second outer step %q", w.String())
	}
}

// A sweep names the best outer step only for runs with an outer loop, and
// survives summaries without accuracies.
func TestSweepLine(t *testing.T) {
	job := run.SweepJob{Scenario: scenarios.Scenario{Name: "x"}}
	acc := run.Aggregate{TestAcc: 0.5, TestAccP: 0.25}
	best := run.OuterRecord{Step: 1, Aggregate: run.Aggregate{TestAcc: 0.75, TestAccP: 0.5}}
	for _, c := range []struct {
		name string
		sum  *run.Summary
		want string
	}{
		{"no outer loop", &run.Summary{Final: acc, Best: &run.OuterRecord{Aggregate: acc}},
			"sweep: x done in 2s: test acc 50.0 / 25.0 % (mean / 10th percentile)"},
		{"outer loop", &run.Summary{Final: acc, Best: &best, Outer: []run.OuterRecord{{}, best, {}}},
			"sweep: x done in 2s: test acc 75.0 / 50.0 % (mean / 10th percentile; best outer step 1 of 0–2)"},
		{"experiment", &run.Summary{Experiment: struct{}{}}, "sweep: x done in 2s"},
	} {
		got := sweepLine(run.SweepResult{Job: job, Summary: c.sum, Wall: 2 * time.Second})
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	// A failed run that left a checkpoint says how to continue it.
	job.OutDir = t.TempDir()
	failed := run.SweepResult{Job: job, Err: errors.New("boom"), Wall: 2 * time.Second}
	if got, want := sweepLine(failed), "sweep: x failed after 2s: boom"; got != want {
		t.Errorf("failed: %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(job.OutDir, "checkpoint.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	kept := run.SweepResult{Job: job, Summary: &run.Summary{}, Kept: true}
	if got, want := sweepLine(kept), "sweep: x completed earlier, kept"; got != want {
		t.Errorf("kept: %q, want %q", got, want)
	}
	if got, want := sweepLine(failed), "sweep: x failed after 2s: boom; the same command continues it from its checkpoint"; got != want {
		t.Errorf("failed with a checkpoint: %q, want %q", got, want)
	}
}

// The stop notice of a signal comes from another goroutine than the
// progress events; it must not tear a bar or race with it (run with
// -race).
func TestProgressNoticeConcurrent(t *testing.T) {
	var w bytes.Buffer
	log := newConsoleLog(&w)
	p := newProgressPrinter(log, &w, true, false)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := range 200 {
			p.event(optim.RoundEvent{Phase: "sgp", Round: r}, run.Aggregate{}, 200)
		}
	}()
	p.notice(func() { log.Warn().Msg("stopping") })
	wg.Wait()
	p.finish()
	for _, line := range strings.Split(w.String(), "\n") {
		if strings.Contains(line, "stopping") && strings.Contains(line, "] round ") {
			t.Errorf("notice not on a line of its own: %q", line)
		}
	}
	if !strings.HasSuffix(w.String(), "\n") {
		t.Errorf("finish left the bar's line open: %q", w.String()[max(0, w.Len()-80):])
	}
}
