package scenarios

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const tiny = `
name: tiny
seed: 3
clients: 6
network:
  kind: stochastic-directed
data:
  train: 40
  val: 10
  test: 10
model:
  head: label-weights
sgp:
  rounds: 40
  batch: 8
  eval_every: 10
  lr:
    schedule: constant
    base: 0.1
hypergradient:
  estimator: vr-hgp
  m: 6
  batch: 8
  eval_every: 5
`

func parseOK(t *testing.T, src string) Scenario {
	t.Helper()
	sc, err := Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sc
}

// TestDeterminism runs the same scenario at GOMAXPROCS 1, 2 and 8 on both
// drivers and requires byte-identical metrics.jsonl and summary.json (the
// summary names its driver, so summaries are compared per driver).
func TestDeterminism(t *testing.T) {
	base := parseOK(t, tiny)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var refMetrics []byte
	refSummary := map[string][]byte{}
	for _, driver := range []string{"sequential", "actors"} {
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			sc := base
			sc.Runtime.Driver = driver
			dir := t.TempDir()
			if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
				t.Fatalf("%s/GOMAXPROCS=%d: %v", driver, procs, err)
			}
			m, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			if refMetrics == nil {
				refMetrics = m
				// 4 SGP evaluations and 2 hyper-gradient reports (rounds 5 and 6),
				// each with 6 client lines and one aggregate.
				if n := bytes.Count(m, []byte("\n")); n != 6*(6+1) {
					t.Fatalf("metrics.jsonl has %d lines, want 6 evaluations × 7", n)
				}
				if !bytes.Contains(m, []byte(`"phase":"hypergradient"`)) {
					t.Fatal("metrics.jsonl has no hyper-gradient lines")
				}
			} else if !bytes.Equal(m, refMetrics) {
				t.Errorf("%s/GOMAXPROCS=%d: metrics.jsonl differs from sequential/GOMAXPROCS=1", driver, procs)
			}
			if ref, ok := refSummary[driver]; !ok {
				refSummary[driver] = s
			} else if !bytes.Equal(s, ref) {
				t.Errorf("%s/GOMAXPROCS=%d: summary.json differs", driver, procs)
			}
		}
	}
	a := bytes.Replace(refSummary["actors"], []byte(`"driver": "actors"`), []byte(`"driver": "sequential"`), 1)
	if !bytes.Equal(a, refSummary["sequential"]) {
		t.Errorf("summaries differ between drivers beyond the driver name:\n%s\n%s", refSummary["sequential"], refSummary["actors"])
	}
}

func TestSeedChangesResults(t *testing.T) {
	a := parseOK(t, tiny)
	b := a
	b.Seed = 4
	ra, err := Execute(context.Background(), a, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Execute(context.Background(), b, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if ra.Final == rb.Final {
		t.Error("seeds 3 and 4 gave identical results")
	}
}

func TestInvalidScenarios(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"malformed", "clients: [1, 2\n", "line"},
		{"unknown key", "clients: 4\nnetwork:\n  kind: ring\n  colour: red\n", `line 4: unknown key "colour" in network`},
		{"unknown top key", "clinets: 4\n", `line 1: unknown key "clinets" in the top level`},
		{"wrong type", "clients: many\n", "line 1"},
		{"delta above 1", "network:\n  kind: stochastic-directed\n  delta_max: 1.5\n", "delta_max: must be in (0, 1], got 1.5"},
		{"delta zero", "network:\n  kind: stochastic-undirected\n  delta_min: 0\n", "delta_min: must be in (0, 1], got 0"},
		{"one client", "clients: 1\n", "clients: must be >= 2, got 1"},
		{"unknown kind", "network:\n  kind: torus\n", `got "torus"`},
		{"bad variant", "sgp:\n  variant: sideways\n", "sgp.variant"},
		{"bad lr", "sgp:\n  lr:\n    base: -1\n", "sgp.lr: learning rate must be"},
		{"empty", "", "empty"},
		{"two documents", "clients: 3\n---\nclients: 4\n", "more than one YAML document"},
		{"estimator without head", "hypergradient:\n  estimator: hgp\n", "needs hyperparameters"},
		{"unknown estimator", "model:\n  head: label-weights\nhypergradient:\n  estimator: magic\n", "hypergradient.estimator"},
		{"alpha outside", "model:\n  head: label-weights\nhypergradient:\n  estimator: vr-hgp\n  alpha: 1.5\n", "alpha: must be in [0, 1], got 1.5"},
		{"m zero", "model:\n  head: label-weights\nhypergradient:\n  estimator: hgp\n  m: 0\n", "hypergradient.m: must be >= 1"},
		{"logistic multiclass", "model:\n  kind: logistic\n", "needs data.classes = 2"},
		{"unknown model", "model:\n  kind: cnn\n", "model.kind"},
		{"empty ensemble", "model:\n  head: ensemble\n  k: 0\n", "k >= 1"},
		{"unknown head", "model:\n  head: hats\n", "model.head"},
		{"unknown method", "method: pdbo-xl\n", "method: must be one of"},
		{"pdbo without outer steps", "method: pdbo-da\n", "outer.steps: method pdbo-da needs at least one outer step"},
		{"outer lr zero", "method: pdbo-mtl\nouter:\n  steps: 2\n  lr: 0\n", "outer.lr: learning rate must be"},
		{"sgp lr negative", "sgp:\n  lr:\n    base: -0.1\n", "sgp.lr"},
		{"override unknown method", "method_overrides:\n  fedavg: {outer_lr: 1}\n", "method_overrides: unknown method"},
		{"beta outside", "model:\n  head: ensemble\nhypergradient:\n  estimator: vr-hgp\n  beta: -0.1\n", "beta: must be in [0, 1]"},
		{"real data fraction", "data:\n  kind: fashion-mnist\n  fraction: 0\n", "data.fraction"},
		{"mnist without dir", "data:\n  kind: mnist\n", "data.dir"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.src))
			if err == nil {
				t.Fatal("accepted an invalid scenario")
			}
			if !IsInvalid(err) {
				t.Errorf("error is not an InvalidError: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestDisconnectedGraphIsInvalid(t *testing.T) {
	sc := parseOK(t, `
clients: 4
network:
  kind: edge-list
  symmetric: true
  edges:
    - {from: 0, to: 1, prob: 0.5}
    - {from: 2, to: 3, prob: 0.5}
`)
	_, err := Build(sc)
	if err == nil || !IsInvalid(err) {
		t.Fatalf("want an InvalidError for a disconnected graph, got %v", err)
	}
	if !strings.Contains(err.Error(), "strongly connected") {
		t.Errorf("error does not say what is wrong: %v", err)
	}
}

func TestShippedScenariosValidate(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped scenarios found: %v", err)
	}
	paper, err := filepath.Glob("paper/*.yaml")
	if err != nil || len(paper) < 5 {
		t.Fatalf("paper scenarios missing: %v %v", paper, err)
	}
	files = append(files, paper...)
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := Build(sc); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestResolvedScenarioRoundTrips(t *testing.T) {
	sc := parseOK(t, tiny)
	b, err := Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("resolved.yaml", b)
	if err != nil {
		t.Fatalf("the resolved scenario does not parse back: %v\n%s", err, b)
	}
	b2, _ := Marshal(back)
	if !bytes.Equal(b, b2) {
		t.Errorf("resolved scenario changed on a round trip:\n%s\n---\n%s", b, b2)
	}
}

func TestFailedRunLeavesNoSummary(t *testing.T) {
	dir := t.TempDir()
	sc := parseOK(t, tiny)
	if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Execute(ctx, sc, Options{OutDir: dir}); err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); !os.IsNotExist(err) {
		t.Errorf("a failed run left summary.json behind (stat: %v)", err)
	}
}

func TestExactBackpropRefusedOnDirectedScenario(t *testing.T) {
	sc := parseOK(t, "network:\n  kind: stochastic-directed\nmodel:\n  head: label-weights\nhypergradient:\n  estimator: exact\n")
	_, err := Build(sc)
	if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), "needs undirected links") {
		t.Fatalf("want an InvalidError about undirected links, got %v", err)
	}
	sc.Network.Kind = "stochastic-undirected"
	if _, err := Build(sc); err != nil {
		t.Fatalf("exact backprop on an undirected network was refused: %v", err)
	}
}

func TestMissingDataFilesAreInvalid(t *testing.T) {
	sc := parseOK(t, "data:\n  kind: fashion-mnist\n  dir: "+t.TempDir()+"\n")
	_, err := Build(sc)
	if err == nil || !IsInvalid(err) {
		t.Fatalf("want an InvalidError for missing files, got %v", err)
	}
	for _, want := range []string{"train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
}

func TestMethodOverridesApply(t *testing.T) {
	sc := parseOK(t, "method: pdbo-mtl-da\nouter:\n  steps: 1\nmethod_overrides:\n  pdbo-mtl-da: {outer_lr: 1.0, outer_lr_labels: 0.3, outer_l2_labels: 0.0005}\n  pdbo-da: {outer_lr: 7}\n")
	if sc.Outer.LR != 1.0 || sc.Outer.LRLabels != 0.3 || sc.Model.OuterL2Labels != 0.0005 {
		t.Errorf("overrides not applied: %+v %+v", sc.Outer, sc.Model)
	}
	if sc.Model.Head != "ensemble-label-weights" || sc.Hypergradient.Estimator != "vr-hgp" {
		t.Errorf("preset not applied: head %q, estimator %q", sc.Model.Head, sc.Hypergradient.Estimator)
	}
}
