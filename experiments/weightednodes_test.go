package experiments

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hgpsim/datasets"
	"hgpsim/run"
	"hgpsim/scenarios"
)

var fakeLoads int

// fakeFashion is a stand-in for the Fashion-MNIST files: n 28×28 images
// per set whose pixels are a class pattern plus noise, so that the
// experiment runs in seconds (and under the race detector) without them.
func fakeFashion() (train, test *datasets.Dataset, err error) {
	fakeLoads++
	r := rand.New(rand.NewPCG(9, 9))
	mk := func(n int) *datasets.Dataset {
		d := &datasets.Dataset{X: make([]float64, n*784), Y: make([]int, n), N: n, D: 784, C: 10}
		for i := range n {
			c := i % 10
			d.Y[i] = c
			for p := range 784 {
				v := 0.5 + 0.4*math.Sin(float64((c+1)*p)/97) + 0.2*r.NormFloat64()
				d.X[i*784+p] = min(1, max(0, v))
			}
		}
		return d
	}
	return mk(400), mk(200), nil
}

// tinyWeightedNodes is the shipped Table 3 scenario cut down to seconds,
// on fake images.
func tinyWeightedNodes(t *testing.T) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Load("../scenarios/paper/weighted-nodes-fmnist.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Experiment.Params.(*WeightedNodesExp)
	e.Settings, e.Targets, e.Seeds, e.Outer, e.TuneOuter = []int{4}, []string{"minority"}, 1, 2, 1
	e.LR, e.Eta, e.DittoLambda, e.PFedMeLambda, e.PFedMeInner = []float64{0.05}, []float64{0.02, 0.5}, []float64{0.1}, []float64{15}, 2
	e.load = fakeFashion
	d := sc.Data.Source.Params.(*datasets.NodeShiftData)
	d.Train, d.Val, d.Test = 60, 40, 100
	return sc
}

// The experiment writes its outputs, checks the paper's claims on its
// numbers, and is the same on both drivers.
func TestWeightedNodesExperiment(t *testing.T) {
	var curves [2]string
	for k, drv := range []string{"sequential", "actors"} {
		sc := tinyWeightedNodes(t)
		sc.Runtime.Driver = drv
		sc.Experiment.Params.(*WeightedNodesExp).Jobs = 1 + k // the results do not depend on it
		dir := t.TempDir()
		if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
			t.Fatalf("%s: %v", drv, err)
		}
		for _, f := range []string{"table.md", "runs.csv", "curves.csv", "weights.csv", "accuracy.png", "weights.png", "summary.json"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Fatalf("%s: %v", f, err)
			}
		}
		b, _ := os.ReadFile(filepath.Join(dir, "curves.csv"))
		w, _ := os.ReadFile(filepath.Join(dir, "weights.csv"))
		curves[k] = string(b) + string(w)
		table, _ := os.ReadFile(filepath.Join(dir, "table.md"))
		for _, m := range []string{"Bi-level", "Local-train", "FedAvg", "Ditto", "pFedMe", "(0.7658 ± 0.0117)"} {
			if !strings.Contains(string(table), m) {
				t.Errorf("table.md lacks %q:\n%s", m, table)
			}
		}
		// 5 methods × 2 outer iterations, and 15 weights × 3 (start, 2 steps).
		if n := strings.Count(string(b), "\n"); n != 1+5*2 {
			t.Errorf("curves.csv has %d lines", n)
		}
		if n := strings.Count(string(w), "\n"); n != 1+15*3 {
			t.Errorf("weights.csv has %d lines", n)
		}
	}
	if fakeLoads != 2 {
		t.Fatalf("the fake images were loaded %d times, want 2", fakeLoads)
	}
	if curves[0] != curves[1] {
		t.Fatal("curves.csv or weights.csv differs between the drivers")
	}
}

// The shipped scenario reads the real files: a run without them is an
// error naming the package.
func TestWeightedNodesMissingFiles(t *testing.T) {
	sc := tinyWeightedNodes(t)
	sc.Experiment.Params.(*WeightedNodesExp).load = nil
	sc.Data.Source.Params.(*datasets.NodeShiftData).Dir = t.TempDir()
	_, err := run.Execute(context.Background(), sc, run.Options{OutDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("got %v, want an error naming the missing files", err)
	}
}

func TestWeightedNodesValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(sc *scenarios.Scenario, e *WeightedNodesExp)
		want string
	}{
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { e.Settings = []int{5} }, "settings"},
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { e.Methods = []string{"sgd"} }, "methods"},
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { e.TuneOuter = 100 }, "tune_outer"},
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { e.Bilevel = "newton" }, "bilevel"},
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { e.Jobs = 0 }, "jobs"},
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { e.Cap = 0.01 }, "cap"},
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { e.LR = []float64{-1} }, "lr"},
		{func(sc *scenarios.Scenario, e *WeightedNodesExp) { sc.Data.Source.Params = &datasets.SyntheticData{} }, "node-shift"},
	} {
		sc, err := scenarios.Load("../scenarios/paper/weighted-nodes-fmnist.yaml")
		if err != nil {
			t.Fatal(err)
		}
		e := sc.Experiment.Params.(*WeightedNodesExp)
		c.edit(&sc, e)
		if err := e.Validate(&sc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error about %q", err, c.want)
		}
	}
}

// The runs draw their data with the scenario's label permutation and
// rotation, not the paper's defaults.
func TestWeightedNodesChosenHeterogeneity(t *testing.T) {
	sc := tinyWeightedNodes(t)
	train, test, _ := fakeFashion()
	d := *sc.Data.Source.Params.(*datasets.NodeShiftData)
	load := func(d datasets.NodeShiftData, setting int) []datasets.ClientData {
		w := &wnEnv{sc: sc, train: train, test: test, data: &d}
		src := w.scenario(nil, setting, "minority", "local-train", 1).Data.Source.Params
		data, err := src.Load(sc.Clients+1, 1)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	paper := load(d, 4)
	d.Permutation, d.Rotation = [][]int{{3, 7}, {7, 3}}, 180
	chosen := load(d, 4)
	d.Setting, d.Target = 4, "minority"
	want, err := datasets.NodeShift(d.Spec(sc.Clients+1), train, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	last := sc.Clients // a majority node
	if !slices.Equal(chosen[last].Train.Y, want[last].Train.Y) || !slices.Equal(chosen[last].Train.X, want[last].Train.X) {
		t.Fatal("the run's data are not the scenario's node-shift data")
	}
	if slices.Equal(chosen[last].Train.Y, paper[last].Train.Y) || slices.Equal(chosen[last].Train.X, paper[last].Train.X) {
		t.Fatal("a chosen permutation and rotation drew the paper's data")
	}
}
