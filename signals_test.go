package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

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
