package run

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// evalOf is an evaluated round of phase sgp at outer step step with the
// clients' training losses (NaN: the client measured none).
func evalOf(step, round int, losses ...float64) *optim.RoundEvent {
	ev := &optim.RoundEvent{Phase: "sgp", Step: step, Round: round}
	for _, l := range losses {
		s := optim.Stats{TrainLoss: l, TrainN: 1}
		if math.IsNaN(l) {
			s = optim.Stats{}
		}
		ev.Clients = append(ev.Clients, s)
	}
	return ev
}

// A blow-up is growth past BlowupGrowth over the value at the phase's
// first evaluation (per client, per phase of an outer step), or a value
// that is not finite; growth below it, or across phases, is none.
func TestDivergenceRecordsBlowups(t *testing.T) {
	var d divergence
	d.evaluated(evalOf(0, 9, 1, 2, math.NaN()))
	d.evaluated(evalOf(0, 19, 999, 2, 5))       // client 0 grew 999-fold, client 2 starts
	d.evaluated(evalOf(0, 29, 1001, 3, 5001))   // client 0 and 2 past 10³
	d.evaluated(evalOf(0, 39, 1e9, 3, 2))       // the same phase: one record, its largest value
	d.evaluated(evalOf(1, 9, 1e9, 1e9, 1e9))    // a new phase starts from these
	d.evaluated(evalOf(1, 19, 1e11, 1e12, 1e9)) // 100- and 1000-fold: none
	if len(d.Blowups) != 1 {
		t.Fatalf("blow-ups %+v, want one", d.Blowups)
	}
	b := d.Blowups[0]
	if b.Phase != "sgp" || b.Step != 0 || b.Round != 29 || b.Client != 0 || b.What != "train_loss" || b.Start != 1 || b.Largest != 1e9 {
		t.Errorf("recorded %+v", b)
	}
	d.evaluated(evalOf(1, 29, math.Inf(1), 1, 1))
	if len(d.Blowups) != 2 || !math.IsInf(d.Blowups[1].Largest, 1) || d.Blowups[1].Step != 1 {
		t.Errorf("a non-finite loss: %+v", d.Blowups)
	}
	d.hypergradient(0, 10, 0.02)
	d.hypergradient(1, 10, 19.9)
	d.hypergradient(2, 10, 2.6e136)
	if len(d.Blowups) != 3 || d.Blowups[2].What != "hypergradient_norm" || d.Blowups[2].Step != 2 || d.Blowups[2].Client != -1 || d.Blowups[2].Start != 0.02 {
		t.Errorf("hyper-gradient norms: %+v", d.Blowups)
	}
	w := d.warning()
	for _, want := range []string{"3 phase(s)", "phase sgp, outer step 0, round 29, client 0", "phase hypergradient, outer step 2"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q does not say %q", w, want)
		}
	}
	if !d.blownUpStep(0) || !d.blownUpStep(1) || d.blownUpStep(2) {
		t.Error("blownUpStep does not name the SGP phases that blew up")
	}
}

// noLoop is an outer loop that reports nothing, for summary.
type noLoop struct{}

func (noLoop) StoppedEarly() bool  { return false }
func (noLoop) ReportsStates() bool { return false }
func (noLoop) HyperLR() float64    { return 0 }
func (noLoop) Oracle(*graph.Network, [][]float64, models.Bilevel[float64], []datasets.ClientData, []optim.Result) ([][]float64, error) {
	return nil, nil
}
func (noLoop) SGPResults([]optim.Result) (lambda, pBar, deltaBar [][]float64, err error) {
	return nil, nil, nil, nil
}
func (noLoop) Hypergradients([]optim.Result) ([][]float64, error) { return nil, nil }

// The best outer step is never one whose SGP phase blew up, unless every
// one did.
func TestBestStepSkipsBlowups(t *testing.T) {
	sink := func(blown ...int) *runSink {
		s := &runSink{prog: noLoop{}, run: &Run{Scenario: scenarios.Scenario{}},
			sum: &Summary{Outer: []OuterRecord{{Step: 0, Aggregate: Aggregate{ValAcc: 0.5}}, {Step: 1, Aggregate: Aggregate{ValAcc: 0.9}}, {Step: 2, Aggregate: Aggregate{ValAcc: 0.7}}}}}
		s.run.Scenario.Outer.Steps = 2
		for _, k := range blown {
			s.div.Blowups = append(s.div.Blowups, Blowup{Phase: "sgp", Step: k, What: "train_loss"})
		}
		return s
	}
	for _, c := range []struct {
		blown []int
		best  int
	}{{nil, 1}, {[]int{1}, 2}, {[]int{1, 2}, 0}, {[]int{0, 1, 2}, 1}} {
		sum, err := sink(c.blown...).summary()
		if err != nil {
			t.Fatal(err)
		}
		if sum.Best.Step != c.best || len(sum.Blowups) != len(c.blown) {
			t.Errorf("blown up %v: best step %d and %d blow-ups, want %d and %d", c.blown, sum.Best.Step, len(sum.Blowups), c.best, len(c.blown))
		}
	}
}

// The bursty study's SGP on burst links (docs/failures.md) blows up in
// its first rounds: the run completes, its summary.json lists the
// blow-up, the run warns naming phase, outer step and client, and a run
// resumed from a checkpoint taken after it records the same.
func TestDivergedRunSaysSo(t *testing.T) {
	sc, err := scenarios.LoadWith("../scenarios/failures/bursty.yaml", []scenarios.Set{mustSet(t, "network.links=burst")})
	if err != nil {
		t.Fatal(err)
	}
	ref := t.TempDir()
	var warned []string
	sum, err := Execute(context.Background(), sc, Options{OutDir: ref, Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Blowups) != 1 || sum.Blowups[0].Phase != "sgp" || sum.Blowups[0].Largest < 1e100 {
		t.Fatalf("blow-ups %+v, want SGP's", sum.Blowups)
	}
	b := sum.Blowups[0]
	if w := strings.Join(warned, "\n"); !strings.Contains(w, "phase sgp, outer step 0") || !strings.Contains(w, "client ") {
		t.Errorf("warnings %q do not name the phase, outer step and client", warned)
	}
	wantM, wantS := readOutputs(t, ref)
	if !bytes.Contains(wantS, []byte(`"blowups"`)) {
		t.Errorf("summary.json has no blowups:\n%s", wantS)
	}
	dir := t.TempDir()
	if stopped, _ := stopAt(t, sc, dir, 2, true); !stopped {
		t.Fatal("the run ended before its second checkpoint")
	}
	if b.Round >= 60 {
		t.Fatalf("the blow-up at round %d is not before the second checkpoint", b.Round)
	}
	if _, err := Resume(context.Background(), ResumeOptions{Options: Options{OutDir: dir}}); err != nil {
		t.Fatal(err)
	}
	gotM, gotS := readOutputs(t, dir)
	if !bytes.Equal(gotM, wantM) || !bytes.Equal(gotS, wantS) {
		t.Errorf("resumed after the blow-up, the outputs differ:\n%s\nwant\n%s", gotS, wantS)
	}
}

func mustSet(t *testing.T, s string) scenarios.Set {
	t.Helper()
	set, err := scenarios.ParseSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
