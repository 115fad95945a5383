package scenarios

import (
	"hgpsim/graph"
	"hgpsim/internal/registry"

	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSweepWritesPaperTable(t *testing.T) {
	base := parseOK(t, tinyPDBO)
	base.SGP.Rounds = 60
	base.Hypergradient.M = 10
	dir := t.TempDir()
	var jobs []SweepJob
	for _, net := range []string{"fully-connected", "stochastic-undirected"} {
		for _, m := range []string{"sgp", "pdbo-da", "local"} {
			sc := base
			sc.Network.Topology = registry.Choose[graph.Topology](net)
			sc.Method = m
			sc.Hypergradient.Estimator = "auto"
			sc.Name = net + "-" + m
			jobs = append(jobs, SweepJob{Scenario: sc, OutDir: filepath.Join(dir, sc.Name)})
		}
	}
	res := Sweep(context.Background(), jobs, 2, nil)
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Job.Scenario.Name, r.Err)
		}
	}
	if err := WriteSweepTables(dir, res); err != nil {
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
	if lines[0] != "| method | FC | StoU |" {
		t.Errorf("header %q", lines[0])
	}
	// Rows in the paper's order: local, sgp, pdbo-da.
	for k, m := range []string{"local", "sgp", "pdbo-da"} {
		if !strings.HasPrefix(lines[2+k], "| "+m+" |") || strings.Count(lines[2+k], " / ") != 2 {
			t.Errorf("row %d = %q, want method %s with two cells", k, lines[2+k], m)
		}
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 1+6 {
		t.Fatalf("results.csv: %d rows, err %v", len(rows), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "validation.png")); err != nil {
		t.Error(err)
	}
}
