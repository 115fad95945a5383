package report

import (
	"context"
	"encoding/csv"
	"hgpsim/internal/testscen"
	"hgpsim/run"
	"hgpsim/scenarios"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sweepFile writes a small PDBO scenario named name on a network kind.
func sweepFile(t *testing.T, dir, name, network string, seed int) string {
	t.Helper()
	src := strings.Replace(testscen.TinyPDBO, "name: tiny-pdbo", "name: "+name, 1)
	src = strings.Replace(src, "seed: 5", "seed: "+strconv.Itoa(seed), 1)
	src = strings.Replace(src, "kind: fully-connected", "kind: "+network, 1)
	src = strings.Replace(src, "rounds: 300", "rounds: 60", 1)
	src = strings.Replace(src, "m: 100", "m: 10", 1)
	src = strings.Replace(src, "estimator: exact", "estimator: auto", 1)
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSweepWritesPaperTable(t *testing.T) {
	in, dir := t.TempDir(), t.TempDir()
	files := []string{sweepFile(t, in, "fc", "fully-connected", 5), sweepFile(t, in, "stou", "stochastic-undirected", 5)}
	jobs, err := run.PlanSweep(run.SweepPlan{Files: files, Methods: []string{"sgp", "pdbo-da", "local"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Sweep(context.Background(), jobs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Job.Scenario.Name, r.Err)
		}
		if filepath.Base(r.Job.OutDir) != r.Job.Scenario.Name {
			t.Errorf("run %s writes into %s", r.Job.Scenario.Name, r.Job.OutDir)
		}
	}
	if !PaperTable(res) {
		t.Fatal("one run per method and scenario is not a paper table")
	}
	if err := WriteSweepTables(dir, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteStudy(dir, res, StudyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSweepPlot(filepath.Join(dir, "validation.png"), res); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(md), "\n")
	if lines[0] != "| method | fc | stou |" {
		t.Errorf("header %q", lines[0])
	}
	// Rows in the paper's order: local, sgp, pdbo-da.
	for k, m := range []string{"local", "sgp", "pdbo-da"} {
		if !strings.HasPrefix(lines[2+k], "| "+m+" |") || strings.Count(lines[2+k], " / ") != 2 {
			t.Errorf("row %d = %q, want method %s with two cells", k, lines[2+k], m)
		}
	}
	rows := readCSV(t, filepath.Join(dir, "results.csv"))
	if len(rows) != 1+6 {
		t.Fatalf("results.csv: %d rows, want a header and one per run", len(rows))
	}
	if strings.Join(rows[0][:6], ",") != "file,scenario,run,method,network,seed" {
		t.Errorf("CSV header %v", rows[0])
	}
	if _, err := os.Stat(filepath.Join(dir, "validation.png")); err != nil {
		t.Error(err)
	}
}

// Two files with the same name used to write into one folder at the same
// time; two files with the same network kind but different seeds used to
// overwrite each other's cell (issue 7 item 5).
func TestSweepKeepsRunsApart(t *testing.T) {
	in, dir := t.TempDir(), t.TempDir()
	a := sweepFile(t, in, "same", "fully-connected", 5)
	sub := filepath.Join(in, "other")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	b := sweepFile(t, sub, "same", "fully-connected", 6)
	if _, err := run.PlanSweep(run.SweepPlan{Files: []string{a, b}, Dir: dir}); err == nil || !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), `both write runs named "same"`) {
		t.Fatalf("want a collision error before anything runs, got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused sweep wrote %d entries", len(entries))
	}
	if _, err := run.Sweep(context.Background(), []run.SweepJob{{Scenario: parse(t, testscen.Tiny), OutDir: dir}, {Scenario: parse(t, testscen.Tiny), OutDir: dir + "/"}}, 1, nil); err == nil {
		t.Error("Sweep ran two jobs into one folder")
	}

	s1, s2 := sweepFile(t, in, "seed5", "fully-connected", 5), sweepFile(t, in, "seed6", "fully-connected", 6)
	jobs, err := run.PlanSweep(run.SweepPlan{Files: []string{s1, s2}, Methods: []string{"sgp"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Sweep(context.Background(), jobs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteStudy(dir, res, StudyOptions{}); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "results.csv"))
	acc := column(t, rows, "test_acc")
	if len(rows) != 3 || rows[1][5] == rows[2][5] || rows[1][acc] == rows[2][acc] {
		t.Errorf("the two seeds' runs are not two rows with their own seed and result: %v", rows)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// column is the index of a CSV header.
func column(t *testing.T, rows [][]string, name string) int {
	t.Helper()
	for k, h := range rows[0] {
		if h == name {
			return k
		}
	}
	t.Fatalf("no column %q in %v", name, rows[0])
	return -1
}

func parse(t *testing.T, src string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
