package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testSecret is the shared secret of the tests' workers and supervisors.
const testSecret = "0123456789abcdef-test-secret"

// withSecret is the environment of a test's hgpsim process: the test
// secret, unless secret is given ("" for none).
func withSecret(secret ...string) []string {
	s := testSecret
	if len(secret) > 0 {
		s = secret[0]
	}
	env := os.Environ()
	for k, kv := range env {
		if strings.HasPrefix(kv, secretEnv+"=") {
			env = append(env[:k:k], env[k+1:]...)
			break
		}
	}
	if s == "" {
		return env
	}
	return append(env, secretEnv+"="+s)
}

// startWorker starts `hgpsim worker --listen 127.0.0.1:0` with the test
// secret and the working folder as data root, and returns the process with
// the address it printed; it is killed with the test.
func startWorker(t *testing.T, bin string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "worker", "--listen", "127.0.0.1:0", "--data-root", ".")
	cmd.Env = withSecret()
	return cmd, listening(t, cmd)
}

// listening starts cmd, a worker, and returns the address it printed.
func listening(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("worker: %v", err)
	}
	const prefix = "hgpsim worker listening on "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("worker said %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return strings.TrimSpace(strings.TrimPrefix(line, prefix))
}

// runBinary runs bin with the test secret in its environment.
func runBinary(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	return runBinaryEnv(t, bin, withSecret(), args...)
}

func runBinaryEnv(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stderr.String(), code
}

// summaryWithoutWire returns dir's summary.json re-encoded without its
// wire entry.
func summaryWithoutWire(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "wire")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestWorkersByteIdentical runs golden scenarios in one process and with
// their clients over 1, 2 and 3 worker processes on localhost: the
// metrics.jsonl files must be byte-identical. The scenarios cover push-sum
// with both hyper-gradient estimators and faults, delayed and dropped
// messages (failures), a server algorithm and a bilevel federated one.
func TestWorkersByteIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts worker processes")
	}
	bin := buildBinary(t)
	var addrs []string
	for range 3 {
		_, a := startWorker(t, bin)
		addrs = append(addrs, a)
	}
	for _, name := range []string{"faults", "failures", "fedavg-star", "fbo-aggitd-star", "pdbo-mtl"} {
		scenario := filepath.Join("run", "testdata", "golden", name+".yaml")
		dir := t.TempDir()
		local := filepath.Join(dir, "local")
		// The actor runtime in one process: summary.json names the driver.
		if msg, code := runBinary(t, bin, "run", scenario, "--out", local, "--set", "runtime.driver=actors"); code != 0 {
			t.Fatalf("%s in process: exit %d: %s", name, code, msg)
		}
		want, err := os.ReadFile(filepath.Join(local, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 3; k++ {
			out := filepath.Join(dir, "workers", string(rune('0'+k)))
			if msg, code := runBinary(t, bin, "run", scenario, "--out", out, "--workers", strings.Join(addrs[:k], ",")); code != 0 {
				t.Fatalf("%s on %d workers: exit %d: %s", name, k, code, msg)
			}
			got, err := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s on %d workers: metrics.jsonl differs from the in-process run", name, k)
			}
			// summary.json too, but for the wire traffic it adds.
			if a, b := summaryWithoutWire(t, local), summaryWithoutWire(t, out); a != b {
				t.Errorf("%s on %d workers: summary.json differs from the in-process run beyond its wire entry", name, k)
			}
		}
	}
}

// TestWorkerKilledMidRun kills a worker process during a run: the run
// exits with code 1 within round_timeout, and the error names the worker
// and its clients. Bad worker addresses are invalid input (exit code 2).
func TestWorkerKilledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts worker processes")
	}
	bin := buildBinary(t)
	w0, a0 := startWorker(t, bin)
	_, a1 := startWorker(t, bin)
	scenario := write(t, "long.yaml", "name: long\nclients: 6\nsgp:\n  rounds: 1000000\n  eval_every: 100\nruntime:\n  round_timeout: 5s\n")
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "run", scenario, "--out", out, "--workers", a0+","+a1)
	cmd.Env = withSecret()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the worker once the run is under way: metrics.jsonl has lines.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl")); bytes.Count(b, []byte("\n")) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the run did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = w0.Process.Kill()
	killed := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if d := time.Since(killed); d > 5*time.Second {
			t.Errorf("the run failed %v after the kill, round_timeout 5s", d)
		}
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 {
			t.Errorf("exit: %v, want code 1", err)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the run hangs after a worker was killed")
	}
	if want := "worker " + a0 + " (clients 0–2)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not name %q", stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		t.Error("a failed run wrote summary.json")
	}

	for _, bad := range []string{"nonsense", "127.0.0.1:0", "127.0.0.1:70000", a1 + "," + a1} {
		if msg, code := runBinary(t, bin, "run", scenario, "--out", out, "--workers", bad); code != 2 {
			t.Errorf("--workers %s: exit %d, want 2: %s", bad, code, msg)
		}
	}
	if msg, code := runBinary(t, bin, "worker", "--listen", "nonsense"); code != 2 {
		t.Errorf("worker --listen nonsense: exit %d, want 2: %s", code, msg)
	}
}

// referenceRun runs scenario body into a fresh folder on the binary and
// returns the folder that holds it and the folder for the run under test.
func referenceRun(t *testing.T, bin, body string) (scenario, ref, out string) {
	t.Helper()
	scenario = write(t, "ck.yaml", body)
	dir := t.TempDir()
	ref = filepath.Join(dir, "ref")
	if msg, code := runBinary(t, bin, "run", scenario, "--out", ref); code != 0 {
		t.Fatalf("reference run: exit %d: %s", code, msg)
	}
	return scenario, ref, filepath.Join(dir, "out")
}

// sameOutputs compares a resumed run's metrics.jsonl and summary.json
// (but for the driver and wire entries) with the reference run's.
func sameOutputs(t *testing.T, ref, out string) {
	t.Helper()
	want, _ := os.ReadFile(filepath.Join(ref, "metrics.jsonl"))
	got, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("metrics.jsonl of the resumed run differs from the uninterrupted one (%d vs %d bytes)", len(got), len(want))
	}
	strip := func(s string) string {
		return strings.Replace(strings.Replace(s, `"driver":"actors"`, "", 1), `"driver":"sequential"`, "", 1)
	}
	if a, b := strip(summaryWithoutWire(t, ref)), strip(summaryWithoutWire(t, out)); a != b {
		t.Errorf("summary.json of the resumed run differs:\n%s\nwant\n%s", b, a)
	}
}

// TestResumeAfterWorkerKilled kills a worker once the run has written a
// checkpoint: the run fails naming the way back (hgpsim resume), and
// resuming it over a fresh worker gives metrics.jsonl and summary.json
// byte-identical to a run in one process that never stopped.
func TestResumeAfterWorkerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts worker processes")
	}
	bin := buildBinary(t)
	scenario, ref, out := referenceRun(t, bin, "name: ck\nclients: 6\nmethod: pdbo-mtl\nsgp:\n  rounds: 200\n  eval_every: 50\nouter:\n  steps: 12\nruntime:\n  round_timeout: 5s\n")
	w0, a0 := startWorker(t, bin)
	_, a1 := startWorker(t, bin)
	cmd := exec.Command(bin, "run", scenario, "--out", out, "--workers", a0+","+a1)
	cmd.Env = withSecret()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(out, "checkpoint.bin")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no checkpoint within a minute: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = w0.Process.Kill()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		// The run may have ended before the kill reached it on a fast
		// machine; then there is nothing to resume and the test says so.
		t.Fatalf("run after the kill: %v, want exit code 1 (stderr: %s)", err, stderr.String())
	}
	if want := "hgpsim resume " + out; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not say %q", stderr.String(), want)
	}
	_, a2 := startWorker(t, bin)
	if msg, code := runBinary(t, bin, "resume", out, "--workers", a2+","+a1); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, msg)
	}
	sameOutputs(t, ref, out)
	if msg, code := runBinary(t, bin, "resume", out); code != 2 || !strings.Contains(msg, "nothing to resume") {
		t.Errorf("resuming a completed run: exit %d, %q; want 2 and nothing to resume", code, msg)
	}
}

// TestResumeAfterSIGKILL kills `hgpsim run` (sequential driver) with
// SIGKILL once it has written a checkpoint and later lines, and resumes it
// on the actor runtime: the outputs equal those of a run that never
// stopped, and a second resume is refused.
func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	scenario, ref, out := referenceRun(t, bin, "name: ck\nclients: 8\nmethod: pdbo-mtl-da\nsgp:\n  rounds: 300\n  eval_every: 20\nouter:\n  steps: 10\n  restart: false\nruntime:\n  driver: sequential\n")
	cmd := exec.Command(bin, "run", scenario, "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var size int
	for {
		if _, err := os.Stat(filepath.Join(out, "checkpoint.bin")); err == nil && size == 0 {
			m, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
			size = len(m) + 1 // kill once lines were written after the checkpoint
		}
		if m, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl")); size > 0 && len(m) >= size {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("no checkpoint within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Kill() // SIGKILL
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		t.Skip("the run completed before it was killed")
	}
	if msg, code := runBinary(t, bin, "resume", out, "--driver", "actors"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, msg)
	}
	sameOutputs(t, ref, out)
}
