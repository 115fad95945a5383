package run

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"hgpsim/scenarios"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/metrics.sha256 from this build")

// addedKeys matches the metrics.jsonl keys added after the checksums were
// recorded, with their values: new diagnostics, whose addition must leave
// every other number as it was. The checksums are of the lines without
// them.
var addedKeys = regexp.MustCompile(`,"(weight|min_weight)":[^,}]*`)

func withoutAddedKeys(b []byte) []byte { return addedKeys.ReplaceAll(b, nil) }

// TestGoldenMetrics runs small deterministic scenarios of every method on
// both drivers (the sequential one on one and on three goroutines) and compares the SHA-256 of metrics.jsonl with the values
// recorded in testdata/golden/metrics.sha256, so that any change of the
// numbers a run produces is visible in `go test`. The checksums changed
// when the matrix products' products became fused multiply-adds (rounded
// once), which moves the last bits of every model's arithmetic; the
// server algorithms' runs changed once before, when their aggregate lines
// stopped carrying a consensus distance of 0 (a distance over one model
// measures nothing), every other byte the same. A commit that changes them
// on purpose says why and reruns this test with -update-golden.
func TestGoldenMetrics(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scenarios: %v", err)
	}
	want := readChecksums(t, "testdata/golden/metrics.sha256")
	got := map[string]string{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		sc, err := scenarios.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		// The sequential driver on one goroutine is the reference; on three
		// it runs the clients' calls in parallel and must not differ.
		for _, rt := range []struct {
			driver   string
			parallel int
		}{{"sequential", 1}, {"sequential", 3}, {"actors", 0}} {
			driver := fmt.Sprintf("%s (parallel %d)", rt.driver, rt.parallel)
			sc.Runtime.Driver, sc.Runtime.Parallel = rt.driver, rt.parallel
			dir := t.TempDir()
			if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
				t.Fatalf("%s on %s: %v", name, driver, err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(withoutAddedKeys(b))
			h := hex.EncodeToString(sum[:])
			if prev, ok := got[name]; ok && prev != h {
				t.Errorf("%s: the drivers disagree (%s vs %s)", name, prev, h)
			}
			got[name] = h
			if !*updateGolden && want[name] != h {
				t.Errorf("%s on %s: metrics.jsonl has SHA-256 %s, recorded %s", name, driver, h, want[name])
			}
		}
	}
	if *updateGolden {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "%s %s\n", n, got[n])
		}
		if err := os.WriteFile("testdata/golden/metrics.sha256", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("checksum recorded for %s, which has no scenario", n)
		}
	}
}

func readChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 {
			out[fields[0]] = fields[1]
		}
	}
	return out
}
