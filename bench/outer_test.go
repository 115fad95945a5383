package bench

import (
	"fmt"
	"testing"
	"time"

	"hgpsim/scenarios"
)

// scenarioFile is DefaultScenario seen from this package's directory.
const scenarioFile = "../" + DefaultScenario

// benchOuterRounds is the cap on the SGP and hyper-gradient rounds of
// BenchmarkOuterStep.
const benchOuterRounds = 10

// outerSetups caches the setups of BenchmarkOuterStep across the trials of
// a sub-benchmark, so that the data are loaded once.
var outerSetups = map[string]*Outer{}

func outerSetup(b *testing.B, data, method string, n int) *Outer {
	b.Helper()
	key := fmt.Sprintf("%s/%s/%d", data, method, n)
	if o, ok := outerSetups[key]; ok {
		return o
	}
	sc, note, err := LoadScenario(scenarioFile)
	if err != nil {
		b.Fatal(err)
	}
	switch {
	case data == "synthetic":
		sc.Data = scenarios.Default().Data
	case note != "":
		b.Skip(note)
	}
	o, err := NewOuter(sc, method, n, benchOuterRounds)
	if err != nil {
		b.Fatal(err)
	}
	outerSetups[key] = o
	return o
}

// BenchmarkOuterStep runs one PDBO outer step of the personalization
// scenario (DefaultScenario) for pdbo-da and pdbo-mtl-da at n = 20 and 100
// under each driver, on the synthetic quickstart data and on the
// scenario's own data (Fashion-MNIST; skipped when it is not installed),
// with at most benchOuterRounds SGP and hyper-gradient rounds. One op is
// one such step through the real program (Outer.Prepare outside the
// timer, OuterTrial.Run inside); the metrics are the parts of
// OuterParts and the step extrapolated to the scenario's T and M.
func BenchmarkOuterStep(b *testing.B) {
	for _, data := range []string{"synthetic", "scenario-data"} {
		for _, method := range []string{"pdbo-da", "pdbo-mtl-da"} {
			for _, n := range []int{20, 100} {
				for _, drv := range Drivers {
					b.Run(fmt.Sprintf("%s/%s/n=%d/%s", data, method, n, drv), func(b *testing.B) {
						o := outerSetup(b, data, method, n)
						var sum [6]time.Duration
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							b.StopTimer()
							t, err := o.Prepare(drv)
							if err != nil {
								b.Fatal(err)
							}
							b.StartTimer()
							p, err := t.Run()
							b.StopTimer()
							t.Close()
							if err != nil {
								b.Fatal(err)
							}
							for k, d := range []time.Duration{p.SGP.PerRound, p.SGP.Eval, p.Hyper.Enter, p.Hyper.PerRound, p.Outer.Wall, o.StepAt(p)} {
								sum[k] += d
							}
						}
						for k, unit := range []string{"sgp-ms/round", "eval-ms", "lin-ms", "hgp-ms/round", "lambda-ms", "step-s-at-T,M"} {
							v := float64(sum[k]) / float64(b.N) / 1e6
							if k == 5 {
								v /= 1e3
							}
							b.ReportMetric(v, unit)
						}
					})
				}
			}
		}
	}
}

// The round setups are the quickstart scenario: scenarios.Default() is
// scenarios/quickstart.yaml in everything a round depends on.
func TestQuickstartScenario(t *testing.T) {
	file, err := scenarios.Load("../scenarios/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := QuickstartScenario(file.Clients)
	for _, sc := range []*scenarios.Scenario{&file, &got} {
		sc.Name, sc.SGP.EvalEvery, sc.Runtime = "", 0, scenarios.RuntimeSpec{}
	}
	a, err := scenarios.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := scenarios.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("QuickstartScenario differs from scenarios/quickstart.yaml:\n%s\nwant\n%s", b, a)
	}
}

func TestRoundsMeasure(t *testing.T) {
	sgp, err := SGPRounds(4)
	if err != nil {
		t.Fatal(err)
	}
	hyp, err := HyperRounds(4, "vr-hgp")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Rounds{sgp, hyp} {
		res, err := s.Compare(5, 1)
		if err != nil {
			t.Fatal(err)
		}
		for k, m := range res {
			if m.Driver != Drivers[k] || m.Rounds != 5 || m.Wall <= 0 || m.SetupHeap == 0 || m.PeakHeap == 0 {
				t.Errorf("%s: implausible measurement %+v", s.Name, m)
			}
		}
	}
}

func TestOuterMeasure(t *testing.T) {
	sc, _, err := LoadScenario(scenarioFile)
	if err != nil {
		t.Fatal(err)
	}
	sc.Data = scenarios.Default().Data
	o, err := NewOuter(sc, "pdbo-da", 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	if o.T != 300 || o.M != 100 || o.TM != 5 || o.MM != 5 || o.Steps != 10 {
		t.Fatalf("T, M, T', M', S = %d, %d, %d, %d, %d; want 300, 100, 5, 5, 10", o.T, o.M, o.TM, o.MM, o.Steps)
	}
	for _, drv := range Drivers {
		p, err := o.Measure(drv)
		if err != nil {
			t.Fatal(err)
		}
		for _, ph := range []PhaseTime{p.SGP, p.Hyper, p.Outer} {
			// Only signs: sums of wall-clock parts against the whole are
			// noise on a loaded machine (CI shares its two cores).
			if ph.Wall <= 0 || (ph.Rounds >= 3 && ph.PerRound <= 0) || ph.Enter < 0 || ph.Eval < 0 {
				t.Errorf("%s: implausible phase timing %+v", drv, ph)
			}
		}
		if p.SGP.Name != "sgp" || p.SGP.Rounds != 5 || p.Hyper.Name != "hypergradient" || p.Hyper.Rounds != 5 ||
			p.Outer.Name != "outer" || p.Outer.Rounds != 1 {
			t.Errorf("%s: phases %q/%d, %q/%d, %q/%d; want sgp/5, hypergradient/5, outer/1", drv,
				p.SGP.Name, p.SGP.Rounds, p.Hyper.Name, p.Hyper.Rounds, p.Outer.Name, p.Outer.Rounds)
		}
		if p.SGP.ObserveClient <= 0 || p.Hyper.EnterClient <= 0 {
			t.Errorf("%s: no evaluation or linearization time recorded: %+v", drv, p)
		}
		if o.StepAt(p) <= p.Measured() || o.RunAt(p) <= o.StepAt(p) {
			t.Errorf("%s: extrapolation %v (step), %v (run) not above the measured %v", drv, o.StepAt(p), o.RunAt(p), p.Measured())
		}
	}
}

func TestEvals(t *testing.T) {
	for _, c := range []struct{ rounds, every, want int }{{300, 0, 1}, {300, 50, 6}, {30, 50, 1}, {10, 3, 4}} {
		if got := evals(c.rounds, c.every); got != c.want {
			t.Errorf("evals(%d, %d) = %d, want %d", c.rounds, c.every, got, c.want)
		}
	}
}
