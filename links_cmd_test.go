package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hgpsim run --record-links, then validate and run --replay-links on the
// recording: the statistics line, and the same metrics.jsonl; a bad trace
// is one line naming the file's line, exit 2, and no output folder.
func TestRecordValidateReplayCLI(t *testing.T) {
	dir := t.TempDir()
	scen := "run/testdata/golden/failures.yaml"
	rec := filepath.Join(dir, "links.csv.gz")
	cli := func(want int, args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runCLI(args, &out, &errb); code != want {
			t.Fatalf("hgpsim %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, errb.String())
		}
		return out.String(), errb.String()
	}
	cli(0, "run", scen, "--out", filepath.Join(dir, "a"), "--record-links", rec)
	out, _ := cli(0, "validate", scen, "--replay-links", rec)
	if !strings.Contains(out, "links trace "+rec+": 8 clients, 67 rounds") || !strings.Contains(out, "availability min") {
		t.Errorf("validate printed:\n%s", out)
	}
	cli(0, "run", scen, "--out", filepath.Join(dir, "b"), "--replay-links", rec)
	a, _ := os.ReadFile(filepath.Join(dir, "a", "metrics.jsonl"))
	b, _ := os.ReadFile(filepath.Join(dir, "b", "metrics.jsonl"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the replay's metrics.jsonl differs from the recorded run's")
	}

	cli(2, "run", scen, "--out", filepath.Join(dir, "c"), "--record-links", filepath.Join(dir, "links.csv"))
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("round,from,to,up\n0,0,1,1\n0,1,0,1\n0,3,3,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, msg := cli(2, "run", scen, "--out", filepath.Join(dir, "d"), "--replay-links", bad)
	if !strings.Contains(msg, bad+":4: self-link 3→3") {
		t.Errorf("error output:\n%s", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "d")); !os.IsNotExist(err) {
		t.Errorf("a run with a bad trace left its output folder: %v", err)
	}
}
