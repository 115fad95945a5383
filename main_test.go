package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"hgpsim/internal/gemm"
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
		{"bench f32 without nets", []string{"bench", "--phase", "ops", "--f32"}, 2, "--f32 only applies to --phase nets"},
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
		for _, want := range []string{"run", "validate", "sweep", "bench", "version", "\n  worker ", "Exit codes"} {
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
	if !strings.Contains(out.String(), "\ncpu: ") || !strings.Contains(out.String(), "\nkernels: "+gemm.Path()+"\n") {
		t.Errorf("version output %q does not name the CPU and the kernel path", out.String())
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

// `hgpsim help <TAB>` completes command names, as cobra's own help
// command does.
func TestHelpCompletion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCLI([]string{"__complete", "help", "v"}, &out, &errb); code != 0 {
		t.Fatalf("exit code %d; stderr %s", code, errb.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "validate\nversion\nview\n:4\n") {
		t.Errorf("completions %q, want validate, version, view and no file completion (:4)", got)
	}
}
