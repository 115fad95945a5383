package run

import (
	"bufio"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hgpsim/optim"
	"hgpsim/scenarios"
)

// recordedRounds reads the rounds a links recording spans.
func recordedRounds(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(gz)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "#! rounds="); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s has no rounds line", path)
	return 0
}

// A program's Horizon, against which a run on a links trace is checked
// before it starts, is the number of communication rounds the run takes:
// over every golden scenario whose program knows it, the rounds its
// recorded links span.
func TestHorizonIsTheRoundsRun(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scenarios: %v", err)
	}
	checked := 0
	for _, f := range files {
		sc, err := scenarios.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		sc.Runtime.Driver = "sequential"
		r, err := Build(sc)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := r.Program().(optim.Horizon)
		if !ok {
			continue
		}
		want := h.Horizon()
		rec := filepath.Join(t.TempDir(), "links.csv.gz")
		if _, err := Execute(context.Background(), sc, Options{OutDir: t.TempDir(), RecordLinks: rec}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got := recordedRounds(t, rec); got != want {
			t.Errorf("%s: the run took %d rounds, its program's horizon is %d", f, got, want)
		}
		checked++
	}
	if checked < 10 {
		t.Errorf("only %d golden programs know their horizon", checked)
	}
	t.Logf("%d golden programs checked", checked)
}
