package experiments

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/datasets"
	"hgpsim/optim/fbo"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// The shipped fbo-table scenario cut down to seconds writes its table, its
// loss table, its curves and its plot; the rounds per outer iteration are
// the methods' 2N+T+3, 2N+3 and N+1.
func TestFBOTableOutputs(t *testing.T) {
	if m := datasets.FashionMNIST("").Missing(); len(m) > 0 {
		t.Skipf("Fashion-MNIST not installed (missing %v); apt-get install %s", m, datasets.FashionMNISTPackage)
	}
	sc, err := scenarios.Load("../scenarios/paper/fbo-table.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Experiment.Params.(*FBOTable)
	e.Splits, e.Taus, e.Seeds, e.Rounds, e.EvalRounds = []string{"shards"}, []int{2}, 1, 20, 10
	e.UploadLoss, e.LossSplits = []float64{0.5}, []string{"shards"}
	e.LossTau = 2
	sc.Clients = 10
	fd := sc.Data.Source.Params.(*datasets.FederatedData)
	fd.PerClient, fd.TestFrac = 20, 0.02
	dir := t.TempDir()
	if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"table.md", "loss.md", "claims.md", "iterations.md", "curves.csv", "accuracy.png", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	var sum FBOTableSummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"fednest": 18, "fbo-aggitd": 13, "lfednest": 6}
	if len(sum.Cells) != 6 {
		t.Fatalf("%d cells, want 3 methods × (loss-free, loss 0.5)", len(sum.Cells))
	}
	for _, c := range sum.Cells {
		if c.RPI != want[c.Method] || len(c.Final) != 1 || c.Final[0] <= 0 {
			t.Errorf("%s: %d rounds per iteration (want %d), final %v", c.Method, c.RPI, want[c.Method], c.Final)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "table.md"))
	if !strings.Contains(string(md), "| fbo-aggitd | 13 | shards | 2 |") {
		t.Errorf("table.md lacks the fbo-aggitd row:\n%s", md)
	}
	// The paired comparisons find the loss-free FBO-AggITD and FedNest cells.
	claims, _ := os.ReadFile(filepath.Join(dir, "claims.md"))
	if !strings.Contains(string(claims), "\n| shards | 2 |") {
		t.Errorf("claims.md lacks the paired shards, τ = 2 row:\n%s", claims)
	}
	iters, _ := os.ReadFile(filepath.Join(dir, "iterations.md"))
	if !strings.Contains(string(iters), "shards, τ = 2:") {
		t.Errorf("iterations.md lacks the shards, τ = 2 table:\n%s", iters)
	}
}

// The released code's choices reach the derived algorithms: local steps and
// redraws for every method, the Neumann variant for FedNest.
func TestFBOTableReleasedChoices(t *testing.T) {
	sc, err := scenarios.Load("../scenarios/paper/fbo-table-code.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Experiment.Params.(*FBOTable)
	for _, m := range []string{"fednest", "fbo-aggitd"} {
		ch, err := e.algorithm(m, "iid", 1)
		if err != nil {
			t.Fatal(err)
		}
		var p fbo.Params
		switch a := ch.Params.(type) {
		case *fbo.FedNest:
			if a.Variant != "released" {
				t.Errorf("fednest: variant %q, want released", a.Variant)
			}
			p = a.Params
		case *fbo.AggITD:
			p = a.Params
		}
		if p.LowerLocal != 25 || !p.Redraw {
			t.Errorf("%s: lower_local %d, redraw %v; want 25, true", m, p.LowerLocal, p.Redraw)
		}
	}
	e.FedNestVariant = "stochastic"
	if err := e.Validate(&sc); err == nil {
		t.Error("fednest_variant stochastic accepted")
	}
}
