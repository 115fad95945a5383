package pdbo

import (
	"strings"
	"testing"

	"hgpsim/optim"
)

// sections is a scenario view holding pdbo's three sections.
type sections map[string]any

func (s sections) Section(key string) any { return s[key] }

func defaultSections() (sections, *SGPSpec) {
	sgp := &SGPSpec{Variant: "after", Rounds: 7, LR: ScheduleSpec{Schedule: "constant", Base: 0.1}}
	return sections{"sgp": sgp, "hypergradient": &HypergradientSpec{Estimator: "none"}, "outer": &OuterSpec{Restart: true}}, sgp
}

// The algorithm plans from the sections the scenario hands it, and the
// local baselines' isolation replaces the run's network by self-loops.
func TestPlanReadsSectionsAndIsolates(t *testing.T) {
	a, err := optim.Algorithms.Lookup("pdbo")
	if err != nil {
		t.Fatal(err)
	}
	alg := a.New()
	if o, ok := alg.(optim.SectionOwner); !ok || strings.Join(o.Sections(), ",") != "sgp,hypergradient,outer" {
		t.Fatalf("pdbo does not own its three sections: %v", alg)
	}
	for _, isolated := range []bool{false, true} {
		view, sgp := defaultSections()
		sgp.Isolated = isolated
		nw := buildNet(t, net("stochastic-directed"), 4, 1)
		s := &optim.Setup{Net: nw, Seed: 3, Sections: view}
		_, prog, err := alg.Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		if a1, ok := prog.(*Alg1); !ok || a1.SGPRounds != 7 || a1.Hyper || a1.Config.N != 4 {
			t.Errorf("isolated %v: program %+v", isolated, prog)
		}
		if got := s.Net.Kind == "local"; got != isolated {
			t.Errorf("isolated %v: the run's network is %s", isolated, s.Net.Kind)
		}
		if isolated && (s.Net.N != 4 || s.Net.Delta(1, 1) != 1 || s.Net.Delta(1, 2) != 0) {
			t.Errorf("the local baselines' network is not self-loops only: %v", s.Net.Prob)
		}
	}
	view, _ := defaultSections()
	delete(view, "outer")
	if _, _, err := alg.Plan(&optim.Setup{Net: buildNet(t, net("fully-connected"), 3, 1), Sections: view}); err == nil || !strings.Contains(err.Error(), "outer") {
		t.Errorf("a view without the outer section: err = %v", err)
	}
}

// The label part of ensemble-label-weights' λ = [λ^K; λ^C] gets lr_labels,
// the ensemble part lr; other heads use lr throughout.
func TestOuterOptimizerRates(t *testing.T) {
	o := &OuterSpec{Optimizer: "sgd", LR: 0.5, LRLabels: 0.25}
	got := outerOptimizer(o, 5, 2).(*SGD).LR
	want := []float64{0.5, 0.5, 0.25, 0.25, 0.25}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("rates %v, want %v", got, want)
		}
	}
	for _, r := range outerOptimizer(o, 3, -1).(*SGD).LR {
		if r != 0.5 {
			t.Fatalf("without a label part every rate is lr, got %v", r)
		}
	}
	o.Optimizer = "adam"
	if _, ok := outerOptimizer(o, 3, -1).(*Adam); !ok {
		t.Error("optimizer adam did not give Adam")
	}
}
