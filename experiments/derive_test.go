package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/internal/registry"
	"hgpsim/optim/faults"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// outputOf runs sc and returns the named output file.
func outputOf(t *testing.T, sc scenarios.Scenario, name string) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The runs an experiment derives are built by package run, so the
// scenario's faults reach their clients: a faulty client changes what the
// experiment measures.
func TestExperimentsApplyFaults(t *testing.T) {
	fedbio, err := scenarios.Parse("tiny.yaml", []byte(tinyFedBio))
	if err != nil {
		t.Fatal(err)
	}
	hgp := tinyHGPError(t)
	spec(hgp).M, spec(hgp).Seeds, spec(hgp).Networks = 5, 1, []string{"stochastic-directed"}
	for _, c := range []struct {
		sc    scenarios.Scenario
		file  string
		kind  string
		fault faults.Fault
	}{
		{fedbio, "curves.csv", "byzantine", &faults.Byzantine{Scale: -1}},
		{hgp, "error.csv", "straggler", &faults.Straggler{Every: 2}},
	} {
		clean := outputOf(t, c.sc, c.file)
		faulty := c.sc
		faulty.Faults = []scenarios.FaultSpec{{Fault: registry.Choice[faults.Fault]{Name: c.kind, Params: c.fault}, Clients: []int{1}}}
		if got := outputOf(t, faulty, c.file); got == clean {
			t.Errorf("%s: %s is the same with client 1 %s", c.sc.Name, c.file, c.kind)
		}
	}
}

// Table 3's numbers are read from paper/weighted-nodes.yaml: every method
// and target of the experiment, four settings each.
func TestWeightedNodesPaperNumbers(t *testing.T) {
	p, err := readWNPaper()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Table3["minority"]["weighted-nodes"][3]; got != [2]float64{0.7658, 0.0117} {
		t.Errorf("setting 4, minority, Bi-level: got %v, want the paper's 0.7658 ± 0.0117", got)
	}
	for target, rows := range p.Table3 {
		for m, row := range rows {
			for s, c := range row {
				if !(c[0] > 0.5 && c[0] < 1 && c[1] > 0 && c[1] < 0.05) {
					t.Errorf("%s/%s setting %d: %v is not an accuracy ± a small std", target, m, s+1, c)
				}
			}
		}
	}
	// Strict decoding: a field the reader does not know is an error, so a
	// misspelt key cannot silently drop numbers.
	var labelsOnly struct {
		Labels map[string]string `yaml:"labels"`
	}
	if err := readPaper("weighted-nodes", &labelsOnly); err == nil || !strings.Contains(err.Error(), "table3") {
		t.Errorf("decoding into a struct without table3: got %v, want an error naming it", err)
	}
}
