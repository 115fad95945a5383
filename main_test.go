package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	good := write(t, "good.yaml", "name: cli\nclients: 4\nsgp:\n  rounds: 5\n  eval_every: 0\n")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"validate ok", []string{"validate", good}, 0, ""},
		{"run ok", []string{"run", good, "--out", filepath.Join(t.TempDir(), "out"), "--seed", "9"}, 0, ""},
		{"unknown key", []string{"validate", write(t, "k.yaml", "clients: 4\nfoo: 1\n")}, 2, `unknown key "foo"`},
		{"malformed", []string{"run", write(t, "m.yaml", "clients: [4\n")}, 2, "line"},
		{"delta outside", []string{"run", write(t, "d.yaml", "network:\n  delta_min: 1.2\n")}, 2, "delta_min"},
		{"one client", []string{"validate", write(t, "n.yaml", "clients: 1\n")}, 2, "clients: must be in [2, 10000], got 1"},
		{"over the memory limit", []string{"validate", "--max-memory", "64KiB", good}, 2, "more than the limit set by --max-memory (64.0 KiB)"},
		{"run over the memory limit", []string{"run", good, "--max-memory=64KiB", "--out", t.TempDir()}, 2, "peak memory"},
		{"bad memory size", []string{"validate", "--max-memory", "lots", good}, 2, `not a size: "lots"`},
		{"validate prints the estimate", []string{"validate", good}, 0, ""},
		{"disconnected", []string{"validate", write(t, "g.yaml", "clients: 3\nnetwork:\n  kind: edge-list\n  symmetric: true\n  edges: [{from: 0, to: 1, prob: 1}]\n")}, 2, "strongly connected"},
		{"missing file", []string{"run", "/nonexistent/x.yaml"}, 2, "no such file"},
		{"no command", nil, 2, "no command"},
		{"unknown command", []string{"fly"}, 2, "unknown command"},
		{"bad flag", []string{"run", good, "--speed", "3"}, 2, "unknown flag: --speed"},
		{"bad seed", []string{"run", good, "--seed", "-3"}, 2, "--seed"},
		{"single-dash long flag", []string{"run", good, "-out", filepath.Join(t.TempDir(), "out")}, 2, "--out"},
		{"two files", []string{"run", good, good}, 2, "exactly one scenario FILE"},
		{"sweep without files", []string{"sweep"}, 2, "at least one scenario FILE"},
		{"sweep of hgp_error", []string{"sweep", "scenarios/paper/hgp-error.yaml", "--out", filepath.Join(t.TempDir(), "sweep")}, 2, "hgpsim run"},
		{"bench positional", []string{"bench", "x"}, 2, "no positional arguments"},
		{"bench bad phase", []string{"bench", "--phase", "warp"}, 2, "--phase"},
		{"bench outer too few rounds", []string{"bench", "--phase", "outer", "--rounds", "2"}, 2, "--rounds must be >= 3"},
		{"bench outer non-pdbo method", []string{"bench", "--phase", "outer", "--methods", "sgp"}, 2, "--methods"},
		{"bench scenario without outer", []string{"bench", "--scenario", "x.yaml"}, 2, "only apply to --phase outer"},
		{"typo", []string{"rn", good}, 2, `did you mean "run"`},
		{"help on unknown topic", []string{"help", "fly"}, 2, "unknown help topic"},
		{"version with argument", []string{"version", "x"}, 2, "no arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runCLI(c.args, &out, &errb)
			if code != c.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, c.code, errb.String())
			}
			if c.msg != "" {
				first := strings.SplitN(errb.String(), "\n", 2)[0]
				if !strings.Contains(first, c.msg) {
					t.Errorf("first stderr line %q does not contain %q", first, c.msg)
				}
			}
		})
	}
}

// Usage errors name the command whose help to read, on the line after the
// error.
func TestUsageErrorHint(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"run"}, "run 'hgpsim run --help' for usage"},
		{[]string{"sweep", "--jobs", "0", "x.yaml"}, "run 'hgpsim sweep --help' for usage"},
		{[]string{"fly"}, "run 'hgpsim --help' for usage"},
		{[]string{"help", "fly"}, "run 'hgpsim --help' for usage"},
	} {
		var out, errb bytes.Buffer
		if code := runCLI(c.args, &out, &errb); code != 2 {
			t.Fatalf("%v: exit code %d, want 2", c.args, code)
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "hgpsim: ") || lines[1] != c.hint {
			t.Errorf("%v: stderr %q, want the error and %q", c.args, errb.String(), c.hint)
		}
	}
}

// `hgpsim` alone prints the usage to stderr and exits 2; `hgpsim help`
// prints it to stdout and exits 0.
func TestNoCommandPrintsUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCLI(nil, &out, &errb); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if !strings.HasPrefix(errb.String(), "hgpsim: no command given\n") || !strings.Contains(errb.String(), "Available Commands") {
		t.Errorf("stderr %q lacks the error line or the usage", errb.String())
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		out.Reset()
		errb.Reset()
		if code := runCLI(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit code %d, want 0; stderr %s", args, code, errb.String())
		}
		for _, want := range []string{"run", "validate", "sweep", "bench", "version", "Exit codes"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: usage lacks %q:\n%s", args, want, out.String())
			}
		}
		// The root command is runnable only to exit 2 when bare.
		if strings.Contains(out.String(), "hgpsim [flags]") {
			t.Errorf("%v: usage offers to run hgpsim without a command:\n%s", args, out.String())
		}
	}
}

// Every subcommand's help lists its flags with their defaults and exits 0.
func TestSubcommandHelp(t *testing.T) {
	want := map[string][]string{
		"run":      {"--out", "--seed", "runs/<name>-<timestamp>"},
		"validate": {"validate FILE"},
		"sweep":    {"--out", "--methods", "--jobs", "--seed", "(default "},
		"bench":    {"--phase", `(default "sgp")`, "--clients", `(default "10,100,1000")`, "--rounds", "(default 200)", "--procs", "--reps", "(default 3)", "--out", "--scenario", "--methods"},
		"version":  {"version"},
	}
	for cmd, flags := range want {
		for _, args := range [][]string{{cmd, "--help"}, {cmd, "-h"}, {"help", cmd}} {
			var out, errb bytes.Buffer
			if code := runCLI(args, &out, &errb); code != 0 {
				t.Fatalf("%v: exit code %d, want 0; stderr %s", args, code, errb.String())
			}
			if errb.Len() != 0 {
				t.Errorf("%v: unexpected stderr %q", args, errb.String())
			}
			for _, f := range flags {
				if !strings.Contains(out.String(), f) {
					t.Errorf("%v: help lacks %q:\n%s", args, f, out.String())
				}
			}
		}
	}
}

// Flags work before and after the positional FILE.
func TestFlagsAroundFile(t *testing.T) {
	good := write(t, "good.yaml", "name: cli\nclients: 4\nsgp:\n  rounds: 5\n  eval_every: 0\n")
	for _, order := range []string{"after", "before"} {
		dir := filepath.Join(t.TempDir(), "out")
		args := []string{"run", good, "--out", dir, "--seed", "3"}
		if order == "before" {
			args = []string{"run", "--out", dir, "--seed", "3", good}
		}
		var out, errb bytes.Buffer
		if code := runCLI(args, &out, &errb); code != 0 {
			t.Fatalf("%s: exit code %d; stderr %s", order, code, errb.String())
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		if !strings.Contains(string(b), `"seed": 3`) {
			t.Errorf("%s: --seed not applied: %s", order, b)
		}
	}
}

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCLI([]string{"version"}, &out, &errb); code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "hgpsim ") || !strings.Contains(out.String(), "revision ") {
		t.Errorf("version output %q", out.String())
	}

	info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "hgpsim", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	if got := versionLine(info, true); !strings.HasPrefix(got, "hgpsim v1.2.3, revision abc123, modified true, go1.99 ") {
		t.Errorf("versionLine with VCS information = %q", got)
	}
	bare := &debug.BuildInfo{Main: debug.Module{Path: "hgpsim"}}
	if got := versionLine(bare, true); !strings.HasPrefix(got, "hgpsim (devel), revision unknown, modified unknown, go") {
		t.Errorf("versionLine without VCS information = %q", got)
	}
	if got := versionLine(nil, false); !strings.HasPrefix(got, "hgpsim (devel), revision unknown, modified unknown, go") {
		t.Errorf("versionLine without build information = %q", got)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBinary builds hgpsim once per test process: the signal tests need
// a process of their own to signal.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hgpsim-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "hgpsim")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// SIGINT and SIGTERM stop a run (or a sweep) at a round boundary: exit
// code 128 + signal, no summary.json, and metrics.jsonl made of complete
// lines.
func TestSignalStopsRunCleanly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	if testing.Short() {
		t.Skip("builds the binary and runs a scenario")
	}
	bin := buildBinary(t)
	// Far more rounds than the test waits for, evaluated often so that
	// metrics.jsonl grows quickly.
	scenario := write(t, "long.yaml", "name: long\nclients: 20\nsgp:\n  rounds: 1000000\n  eval_every: 2\n")
	for _, c := range []struct {
		cmd  string
		sig  syscall.Signal
		code int
	}{{"run", syscall.SIGTERM, 143}, {"run", syscall.SIGINT, 130}, {"sweep", syscall.SIGTERM, 143}} {
		t.Run(c.cmd+"/"+signalName(c.sig), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			runDir := out
			if c.cmd == "sweep" {
				runDir = filepath.Join(out, "long") // one folder per scenario
			}
			cmd := exec.Command(bin, c.cmd, scenario, "--out", out)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			metrics := filepath.Join(runDir, "metrics.jsonl")
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
				if b, _ := os.ReadFile(metrics); bytes.Count(b, []byte("\n")) >= 10 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no metrics after a minute; stderr:\n%s", stderr.String())
				}
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatalf("still running a minute after %s; stderr:\n%s", signalName(c.sig), stderr.String())
			}
			if got := cmd.ProcessState.ExitCode(); got != c.code {
				t.Fatalf("exit code %d (%s), want %d; stderr:\n%s", got, cmd.ProcessState, c.code, stderr.String())
			}
			if last := lastLine(stderr.String()); !strings.HasPrefix(last, "hgpsim: interrupted by "+signalName(c.sig)+": ") {
				t.Errorf("last stderr line %q does not report the interruption", last)
			}
			if _, err := os.Stat(filepath.Join(runDir, "summary.json")); !os.IsNotExist(err) {
				t.Errorf("summary.json exists after an interrupted run (stat: %v)", err)
			}
			// This relies on the clean stop: Execute flushes its buffered
			// metrics writer when the driver returns, so the file ends at
			// a line boundary. (A line-atomic metrics writer is on its way
			// in package scenarios; it would make this hold even if the
			// process died mid-run.)
			b, err := os.ReadFile(metrics)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == 0 || b[len(b)-1] != '\n' {
				t.Fatalf("metrics.jsonl does not end with a newline (%d bytes)", len(b))
			}
			for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				var obj map[string]any
				if err := json.Unmarshal([]byte(line), &obj); err != nil {
					t.Fatalf("metrics.jsonl line %d is not a JSON object (%v): %q", i+1, err, line)
				}
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

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

// `hgpsim help <TAB>` completes command names, as cobra's own help
// command does.
func TestHelpCompletion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCLI([]string{"__complete", "help", "v"}, &out, &errb); code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, errb.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "validate\nversion\n:4\n") {
		t.Errorf("completions %q, want validate, version and no file completion (:4)", got)
	}
}
