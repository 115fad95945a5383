package experiments

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// tinyHGPError is the shipped scenario cut down to seconds.
func tinyHGPError(t *testing.T) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Load("../scenarios/paper/hgp-error.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec(sc).M = 40
	spec(sc).Seeds = 2
	sc.SGP.Rounds = 200
	return sc
}

func readErrorCSV(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "error.csv"))
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

func readHGPSummary(t *testing.T, dir string) HGPErrorSummary {
	t.Helper()
	var sum HGPErrorSummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestHGPErrorExperimentOutputs(t *testing.T) {
	sc := tinyHGPError(t)
	dir := t.TempDir()
	if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	rows := readErrorCSV(t, dir)
	if h := rows[0]; !slices.Equal(h, []string{"network", "alpha", "beta", "seed", "m", "error", "status", "reason"}) {
		t.Fatalf("header %q", h)
	}
	seeds := map[string]bool{}
	for _, r := range rows[1:] {
		if r[6] != "ok" || r[7] != "" {
			t.Fatalf("row %q: no seed should be skipped here", r)
		}
		seeds[r[3]] = true
	}
	// The seed column holds the seeds themselves: scenario seed 1, 2 seeds.
	if len(seeds) != 2 || !seeds["1"] || !seeds["2"] {
		t.Errorf("seeds in error.csv: %v, want 1 and 2", seeds)
	}
	if want := 2 * 5 * 2 * (40 + 1); len(rows)-1 != want {
		t.Errorf("error.csv has %d rows, want %d", len(rows)-1, want)
	}
	pf, err := os.Open(filepath.Join(dir, "error.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("error.png is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("error.png is %v", b)
	}
	sum := readHGPSummary(t, dir)
	if len(sum.Final) != 10 {
		t.Fatalf("summary has %d final entries, want 10", len(sum.Final))
	}
	for _, f := range sum.Final {
		if f.N != 2 || !(f.Median > 0) || f.P10 > f.Median || f.Median > f.P90 {
			t.Errorf("implausible quantiles %+v", f)
		}
	}
	// k of n against HGP: 4 pairs × 2 networks, k recounted from error.csv.
	if len(sum.Beats) != 8 {
		t.Fatalf("summary has %d beats entries, want 8", len(sum.Beats))
	}
	final := map[string]float64{}
	for _, r := range rows[1:] {
		if r[4] == "40" {
			v, _ := strconv.ParseFloat(r[5], 64)
			final[r[0]+"/"+r[1]+"/"+r[2]+"/"+r[3]] = v
		}
	}
	for _, b := range sum.Beats {
		wins := 0
		for _, seed := range []string{"1", "2"} {
			hgp := final[b.Network+"/1/0/"+seed]
			if final[b.Network+"/"+ftoa(b.Alpha)+"/"+ftoa(b.Beta)+"/"+seed] < hgp {
				wins++
			}
		}
		if b.Seeds != 2 || b.Wins != wins {
			t.Errorf("%+v: want %d wins of 2", b, wins)
		}
	}
	if len(sum.Skipped) != 0 || len(sum.OracleGap) != 2 || sum.OracleGap["stochastic-directed"].N != 2 {
		t.Errorf("skipped %v, oracle gap %v", sum.Skipped, sum.OracleGap)
	}
}

// linkRecorder records the receivers its behaviour is given in every round.
type linkRecorder struct {
	optim.Wrapped
	links [][]int
}

func (r *linkRecorder) Send(round *optim.Round, out optim.Outbox) error {
	r.links = append(r.links, slices.Clone(round.Links))
	return r.Inner.Send(round, out)
}

func (r *linkRecorder) Receive(round *optim.Round, in []optim.Message) error {
	return r.Inner.Receive(round, in)
}

// Common random numbers: two identical (α, β) pairs of one seed see the
// same realized links round by round, hence give identical error curves.
func TestHGPErrorPairsShareEdgeRealizations(t *testing.T) {
	sc := tinyHGPError(t)
	spec(sc).Pairs = [][2]float64{{0.9, 0.1}, {0.9, 0.1}, {1, 0}}
	rec := map[[2]int]*linkRecorder{}
	wrap := func(pi, i int, b optim.Behaviour) optim.Behaviour {
		r := &linkRecorder{Wrapped: optim.Wrapped{Inner: b}}
		rec[[2]int{pi, i}] = r
		return r
	}
	got, err := hgpErrorOne(context.Background(), sc, spec(sc), testEnv(t, sc), "stochastic-directed", 3, wrap)
	if err != nil {
		t.Fatal(err)
	}
	if got.skip != nil {
		t.Fatalf("seed skipped: %v", got.skip.Reason)
	}
	for m := range got.errors[0] {
		if math.Float64bits(got.errors[0][m]) != math.Float64bits(got.errors[1][m]) {
			t.Fatalf("m = %d: pair 1 error %v, pair 2 error %v", m, got.errors[0][m], got.errors[1][m])
		}
	}
	if slices.Equal(got.errors[0], got.errors[2]) {
		t.Fatal("HGP and VR-HGP gave the same curve: the test cannot tell pairs apart")
	}
	down := 0
	for i := 0; i < sc.Clients; i++ {
		a, b := rec[[2]int{0, i}].links, rec[[2]int{1, i}].links
		if len(a) != 2*spec(sc).M || len(b) != len(a) {
			t.Fatalf("client %d: %d and %d rounds recorded, want %d", i, len(a), len(b), 2*spec(sc).M)
		}
		for r := range a {
			if !slices.Equal(a[r], b[r]) {
				t.Fatalf("client %d, round %d: pair 1 pushed to %v, pair 2 to %v", i, r, a[r], b[r])
			}
			if len(a[r]) < sc.Clients {
				down++
			}
		}
	}
	// The realizations must actually vary, or sharing them proves nothing.
	if down == 0 {
		t.Fatal("no link was ever down")
	}
}

// The actor runtime and the sequential driver write the same error.csv,
// byte for byte.
func TestHGPErrorDriversAgree(t *testing.T) {
	var csvs [2][]byte
	for k, drv := range []string{"sequential", "actors"} {
		sc := tinyHGPError(t)
		spec(sc).M = 15
		sc.SGP.Rounds = 60
		sc.Runtime.Driver = drv
		dir := t.TempDir()
		if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
			t.Fatalf("%s: %v", drv, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "error.csv"))
		if err != nil {
			t.Fatal(err)
		}
		csvs[k] = b
		if s := readHGPSummary(t, dir); s.Driver != drv {
			t.Errorf("summary says driver %q, ran %q", s.Driver, drv)
		}
	}
	if string(csvs[0]) != string(csvs[1]) {
		t.Fatal("error.csv differs between the sequential driver and the actor runtime")
	}
}

// Seed 18 of the shipped setting (the failing seed: scenario seed
// 1, 18th seed) has no oracle at the last SGP iterate: ρ(Ā) ≥ 1. The run
// records it and goes on with seed 19.
func TestHGPErrorRecordsSeedWithoutOracle(t *testing.T) {
	sc, err := scenarios.Load("../scenarios/paper/hgp-error.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Seed = 18
	spec(sc).Seeds = 2
	spec(sc).M = 10
	spec(sc).Networks = []string{"stochastic-directed"}
	dir := t.TempDir()
	if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
		t.Fatalf("the run must go on past a seed without an oracle: %v", err)
	}
	sum := readHGPSummary(t, dir)
	if len(sum.Skipped) != 1 {
		t.Fatalf("skipped %+v, want seed 18 only", sum.Skipped)
	}
	s := sum.Skipped[0]
	if s.Seed != 18 || s.At != "last" || s.Status != "diverges" || s.Radius == nil || !(*s.Radius >= 1) ||
		s.MinOmega == nil || !(*s.MinOmega > 0 && *s.MinOmega < 1) || s.Reason == "" {
		t.Errorf("skip record %+v", s)
	}
	t.Logf("seed 18: %s", s.Reason)
	for _, f := range sum.Final {
		if f.N != 1 {
			t.Errorf("%+v: want n = 1 (seed 19 only)", f)
		}
	}
	for _, b := range sum.Beats {
		if b.Seeds != 1 {
			t.Errorf("%+v: want 1 seed compared", b)
		}
	}
	// The gap needs the oracle at y⁽ᵀ⁾ too: missing for seed 18, not a failure.
	if len(sum.GapMissing) != 1 || sum.GapMissing[0].Seed != 18 || sum.OracleGap["stochastic-directed"].N != 1 {
		t.Errorf("gap missing %+v, gap %+v", sum.GapMissing, sum.OracleGap)
	}
	var skipRows, okRows int
	for _, r := range readErrorCSV(t, dir)[1:] {
		switch {
		case r[3] == "18" && r[6] == "diverges" && r[4] == "" && r[5] == "" && r[7] == s.Reason:
			skipRows++
		case r[3] == "19" && r[6] == "ok":
			okRows++
		default:
			t.Fatalf("unexpected row %q", r)
		}
	}
	if skipRows != 5 || okRows != 5*11 {
		t.Errorf("%d skip rows (want 5, one per pair) and %d ok rows (want 55)", skipRows, okRows)
	}
}

// Without oracle_gap the fixed point y* is not needed and no gap is reported.
func TestHGPErrorGapOnlyWhenAsked(t *testing.T) {
	sc := tinyHGPError(t)
	spec(sc).OracleGap = false
	spec(sc).Networks = []string{"stochastic-directed"}
	spec(sc).M = 5
	dir := t.TempDir()
	if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["oracle_gap"]; ok {
		t.Error("summary reports an oracle gap that was not asked for")
	}
}

// Cancelling the context stops the experiment, inside the driver runs of
// a seed as well as between seeds, and leaves no summary behind.
func TestHGPErrorHonoursCancellation(t *testing.T) {
	for _, drv := range []string{"sequential", "actors"} {
		sc := tinyHGPError(t)
		sc.Runtime.Driver = drv
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := hgpErrorOne(ctx, sc, spec(sc), testEnv(t, sc), "stochastic-directed", 1, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: one seed with a cancelled context: want context.Canceled, got %v", drv, err)
		}
	}
	for _, drv := range []string{"sequential", "actors"} {
		sc := tinyHGPError(t)
		sc.Runtime.Driver = drv
		spec(sc).Seeds = 50
		ctx, cancel := context.WithCancel(context.Background())
		done := 0
		progress := func(optim.RoundEvent, run.Aggregate, int) {
			if done++; done == 1 {
				cancel()
			}
		}
		dir := t.TempDir()
		_, err := run.Execute(ctx, sc, run.Options{OutDir: dir, Progress: progress})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: want context.Canceled, got %v", drv, err)
		}
		for _, f := range []string{"summary.json", "error.csv"} {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("%s: %s exists after a cancelled run", drv, f)
			}
		}
	}
}

// spec returns the scenario's hgp-error parameters.
func spec(sc scenarios.Scenario) *HGPError { return sc.Experiment.Params.(*HGPError) }

// testEnv is the environment run.Execute gives the experiment.
func testEnv(t *testing.T, sc scenarios.Scenario) scenarios.Env {
	return run.NewEnv(sc, t.TempDir(), nil)
}

// With sgp.weight_floor the seed without an oracle has one (its small
// weight made the linearized step too large), and the final error against
// the oracle at y* is within the oracle gap of the error against the one
// at y⁽ᵀ⁾ (triangle inequality, one seed per cell).
func TestHGPErrorWeightFloorGivesSeed18AnOracle(t *testing.T) {
	sc, err := scenarios.Load("../scenarios/paper/hgp-error.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Seed = 18
	sc.SGP.WeightFloor = 0.5
	spec(sc).Seeds = 1
	spec(sc).M = 10
	spec(sc).Networks = []string{"stochastic-directed"}
	dir := t.TempDir()
	if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	sum := readHGPSummary(t, dir)
	if len(sum.Skipped) != 0 || len(sum.Final) != 5 || len(sum.FinalOther) != 5 {
		t.Fatalf("skipped %+v, %d final cells, %d against y*; want none skipped, 5 and 5", sum.Skipped, len(sum.Final), len(sum.FinalOther))
	}
	gap := sum.OracleGap["stochastic-directed"].Median
	for k, f := range sum.Final {
		o := sum.FinalOther[k]
		if o.N != 1 || o.Alpha != f.Alpha || o.Beta != f.Beta || math.Abs(o.Median-f.Median) > gap*(1+1e-12) {
			t.Errorf("(%g, %g): error %g at y⁽ᵀ⁾, %g against y*, gap %g: outside the triangle inequality", f.Alpha, f.Beta, f.Median, o.Median, gap)
		}
	}
}
