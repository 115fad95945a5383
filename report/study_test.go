package report

import (
	"bytes"
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// The interval against a hand computation with the tabulated quantile
// t(0.975, 4) = 2.776445 (any statistics table).
func TestMeanIntervalAgainstTable(t *testing.T) {
	got := MeanInterval([]float64{1, 2, 3, 4, 5})
	want := 2.776445 * math.Sqrt(2.5) / math.Sqrt(5)
	if got.N != 5 || got.Mean != 3 || math.Abs(got.Half-want) > 1e-6 {
		t.Errorf("got %+v, want mean 3 ± %.6f", got, want)
	}
	// t(0.975, 1) = 12.7062: two runs give a wide interval.
	got = MeanInterval([]float64{0, 1})
	if want := 12.7062 * math.Sqrt(0.5) / math.Sqrt(2); math.Abs(got.Half-want) > 1e-4 {
		t.Errorf("two runs: half-width %v, want %v", got.Half, want)
	}
	if got := MeanInterval([]float64{7}); got.Mean != 7 || !math.IsNaN(got.Half) {
		t.Errorf("one run: %+v, want mean 7 and no interval", got)
	}
	if got := MeanInterval([]float64{1, math.Inf(1)}); !math.IsInf(got.Mean, 1) {
		t.Errorf("a diverged seed was averaged away: %+v", got)
	}
}

// A grid × seeds sweep: one row per run with the varied key as a column,
// one study row per grid point whose mean is the mean of its runs' rows,
// and the plots.
func TestStudyGridWithSeeds(t *testing.T) {
	in, dir := t.TempDir(), t.TempDir()
	file := sweepFile(t, in, "grid", "stochastic-directed", 5)
	grid, err := run.ParseGrid("network.delta_min=0.3,0.6")
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := run.ParseSeeds("1-2,7")
	if err != nil {
		t.Fatal(err)
	}
	set, err := scenarios.ParseSet("network.delta_max=0.9")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := run.PlanSweep(run.SweepPlan{Files: []string{file}, Methods: []string{"sgp", "pdbo-da"},
		Sets: []scenarios.Set{set}, Grid: []run.GridAxis{grid}, Seeds: seeds, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2*2*3 {
		t.Fatalf("%d jobs, want methods × values × seeds = 12", len(jobs))
	}
	if got := jobs[1].Scenario.Name; got != "grid-sgp-delta_min_0.3-seed_2" {
		t.Errorf("run name %q", got)
	}
	for _, j := range jobs {
		if j.Scenario.Network.Topology.Params == nil {
			t.Fatal("no network")
		}
	}
	res, err := run.Sweep(context.Background(), jobs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if PaperTable(res) {
		t.Error("a grid with seeds was taken for the paper's table")
	}
	metrics, err := ParseMetrics("test_acc,consensus,p_bar_error", false)
	if err != nil {
		t.Fatal(err)
	}
	curves, err := ParseMetrics("train_loss", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteStudy(dir, res, StudyOptions{Metrics: metrics, Curves: curves}); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "results.csv"))
	if len(rows) != 1+12 {
		t.Fatalf("results.csv has %d rows, want 13", len(rows))
	}
	dm, acc, seed := column(t, rows, "network.delta_min"), column(t, rows, "test_acc"), column(t, rows, "seed")
	// Recompute the study's means from the long table.
	sums := map[string][]float64{}
	for _, r := range rows[1:] {
		if r[column(t, rows, "status")] != "ok" {
			t.Fatalf("run %s failed: %s", r[2], r[len(r)-1])
		}
		v, err := strconv.ParseFloat(r[acc], 64)
		if err != nil {
			t.Fatal(err)
		}
		sums[r[3]+"/"+r[dm]] = append(sums[r[3]+"/"+r[dm]], v)
	}
	if rows[1][seed] != "1" || rows[3][seed] != "7" || rows[1][dm] != "0.3" {
		t.Errorf("first rows %v %v", rows[1], rows[3])
	}
	study := readCSV(t, filepath.Join(dir, "study.csv"))
	if len(study) != 1+4 {
		t.Fatalf("study.csv has %d rows, want 4 groups", len(study))
	}
	mean, runs := column(t, study, "test_acc_mean"), column(t, study, "runs")
	for _, r := range study[1:] {
		vs := sums[r[1]+"/"+r[2]]
		want := (vs[0] + vs[1] + vs[2]) / 3
		got, _ := strconv.ParseFloat(r[mean], 64)
		if r[runs] != "3" || math.Abs(got-want) > 1e-12 {
			t.Errorf("group %v: runs %s mean %v, want 3 runs mean %v", r[:3], r[runs], got, want)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(md), "| method | network.delta_min | runs | test_acc (%) | consensus | p_bar_error |") || strings.Count(string(md), " ± ") != 4*3+1 { // cells and the caption
		t.Errorf("study.md:\n%s", md)
	}
	for _, name := range []string{"test_acc.png", "consensus.png", "p_bar_error.png", "curve-train_loss.png"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseMetrics(t *testing.T) {
	if _, err := ParseMetrics("test_acc,nope", false); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown metric: %v", err)
	}
	if _, err := ParseMetrics("messages", true); err == nil || !strings.Contains(err.Error(), "per-round") {
		t.Errorf("a whole-run metric as a curve: %v", err)
	}
	if ms, err := ParseMetrics("", true); err != nil || len(ms) != 0 {
		t.Errorf("empty list: %v %v", ms, err)
	}
}

func TestRoundAxisFollowsPhases(t *testing.T) {
	evals := []scenarios.Eval{{Phase: "sgp", Step: 0, Round: 4}, {Phase: "sgp", Step: 0, Round: 9},
		{Phase: "sgp", Step: 1, Round: 4}, {Phase: "sgp", Step: 1, Round: 9}}
	got := roundAxis(evals)
	want := []float64{4, 9, 14, 19}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("rounds %v, want %v", got, want)
		}
	}
}

// Huge and non-finite values (a diverged seed) are drawn or left out, and
// never fail the plot.
func TestMetricPlotWithOverflow(t *testing.T) {
	m, _ := LookupMetric("max_train_loss")
	mk := func(v float64) run.SweepResult {
		return run.SweepResult{Job: run.SweepJob{Base: "b", Method: "sgp", Vary: []run.Assignment{{Key: "k", Value: "1"}}},
			Summary: &run.Summary{Final: optim.Aggregate{TrainLoss: v}}}
	}
	groups := groupRuns([]run.SweepResult{mk(1e300), mk(1e-300), mk(2)})
	other := groupRuns([]run.SweepResult{mk(math.Inf(1)), mk(3)})
	other[0].vary = []run.Assignment{{Key: "k", Value: "2"}}
	dir := t.TempDir()
	if err := writeMetricPlot(filepath.Join(dir, "m.png"), append(groups, other...), []string{"k"}, m); err != nil {
		t.Fatal(err)
	}
}

func TestLogTicksLabelShortAxes(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(0.08, 0.6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "0.08 0.09 0.1 0.2 0.3 0.4 0.5 0.6" {
		t.Errorf("labels %v within a decade", labels)
	}
	labels = labels[:0]
	for _, tk := range (logTicks{}).Ticks(0.003, 2) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "0.005 0.01 0.02 0.05 0.1 0.2 0.5 1 2" {
		t.Errorf("labels %v over three decades", labels)
	}
	if n := len((logTicks{}).Ticks(1e-9, 1e200)); n > 10 {
		t.Errorf("209 decades: %d ticks, want about eight", n)
	}
}
