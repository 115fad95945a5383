package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/run"
)

// readAll returns the bytes of every file of dir named in names.
func readAll(t *testing.T, dir string, names []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

// Rebuild reads a finished sweep back from its folders and writes the
// tables and plots the sweep wrote from the results in memory, byte for
// byte: the read-back summaries, the evaluations read from metrics.jsonl
// (max_train_loss, lowest_weight, the curves) and a failed run included.
func TestRebuildReproducesTables(t *testing.T) {
	for _, c := range []struct {
		name    string
		methods []string
		grid    []run.GridAxis
		seeds   []uint64
		files   []string
	}{
		{"study", []string{"sgp", "pdbo-da"}, []run.GridAxis{{Key: "sgp.lr.base", Values: []string{"0.05", "1e300"}}}, []uint64{1, 2},
			[]string{"results.csv", "study.csv", "study.md", "test_acc.png", "max_train_loss.png", "curve-train_loss.png", "curve-min_weight.png"}},
		{"paper", []string{"sgp", "pdbo-da"}, nil, nil,
			[]string{"results.csv", "study.csv", "study.md", "results.md", "validation.png", "test_acc.png"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, dir := t.TempDir(), t.TempDir()
			files := []string{sweepFile(t, in, "fc", "fully-connected", 5), sweepFile(t, in, "stou", "stochastic-directed", 5)}
			jobs, err := run.PlanSweep(run.SweepPlan{Files: files, Methods: c.methods, Grid: c.grid, Seeds: c.seeds, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			const plot, curves = "test_acc,max_train_loss", "train_loss,min_weight"
			if err := run.WriteSweepManifest(dir, jobs, plot, curves); err != nil {
				t.Fatal(err)
			}
			res, err := run.Sweep(context.Background(), jobs, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			failed := 0
			for _, r := range res {
				if r.Err != nil {
					failed++
				}
			}
			if c.grid != nil && failed == 0 {
				t.Fatal("a step size of 1e300 should make runs fail (the test wants a failed row)")
			}
			metrics, _ := ParseMetrics(plot, false)
			curveMetrics, _ := ParseMetrics(curves, true)
			if err := WriteStudy(dir, res, StudyOptions{Metrics: metrics, Curves: curveMetrics}); err != nil {
				t.Fatal(err)
			}
			if PaperTable(res) {
				if err := WriteSweepTables(dir, res); err != nil {
					t.Fatal(err)
				}
				if err := WriteSweepPlot(filepath.Join(dir, "validation.png"), res); err != nil {
					t.Fatal(err)
				}
			}
			want := readAll(t, dir, c.files)
			for _, n := range c.files {
				if err := os.Remove(filepath.Join(dir, n)); err != nil {
					t.Fatal(err)
				}
			}
			table, _, err := Rebuild(dir)
			if err != nil {
				t.Fatal(err)
			}
			if wantTable := map[bool]string{true: "results.md", false: "study.md"}[c.grid == nil]; table != wantTable {
				t.Errorf("table %s, want %s", table, wantTable)
			}
			got := readAll(t, dir, c.files)
			for _, n := range c.files {
				if !bytes.Equal(got[n], want[n]) {
					t.Errorf("%s differs from the sweep's:\n%.2000s\nwant\n%.2000s", n, got[n], want[n])
				}
			}
			if c.grid != nil && !strings.Contains(string(got["results.csv"]), "failed") {
				t.Error("results.csv has no failed row")
			}
		})
	}
}

// A stopped sweep's report marks the runs that did not complete.
func TestRebuildIncompleteSweep(t *testing.T) {
	in, dir := t.TempDir(), t.TempDir()
	files := []string{sweepFile(t, in, "fc", "fully-connected", 5)}
	jobs, err := run.PlanSweep(run.SweepPlan{Files: files, Methods: []string{"sgp", "local"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteSweepManifest(dir, jobs, DefaultStudyMetrics, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Sweep(context.Background(), jobs[:1], 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Rebuild(dir); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "results.csv"))
	if len(rows) != 3 || rows[1][len(rows[1])-1] != "" || !strings.Contains(rows[2][len(rows[2])-1], "did not complete") {
		t.Errorf("results.csv rows %q: want the first ok and the second 'did not complete'", rows)
	}
	if _, _, err := Rebuild(t.TempDir()); err == nil || !strings.Contains(err.Error(), "sweep.json") {
		t.Errorf("a folder without sweep.json: %v", err)
	}
}
