package fed

import (
	"math"
	"strings"
	"testing"

	"hgpsim/graph"
	"hgpsim/optim"
)

// The adaptive server steps follow Reddi et al. 2021, Alg. 2, written
// here once more per coordinate from the paper: m ← β1 m + (1 − β1)Δ,
// v by each method's rule, x ← x + η m/(√v + τ), from m = 0, v = τ².
func TestAdaptiveStepsFollowThePaper(t *testing.T) {
	ad := Adaptive{FedAvg: *DefaultFedAvg(), ServerLR: 0.05, Beta1: 0.8, Tau: 0.01}
	sm := SecondMoment{Adaptive: ad, Beta2: 0.9}
	rules := map[string]struct {
		step ServerStep
		v    func(v, d2 float64) float64
	}{
		"fedadam": {(&FedAdam{sm}).Step, func(v, d2 float64) float64 { return 0.9*v + 0.1*d2 }},
		"fedyogi": {(&FedYogi{sm}).Step, func(v, d2 float64) float64 {
			sign := 0.0
			if v > d2 {
				sign = 1
			} else if v < d2 {
				sign = -1
			}
			return v - 0.1*d2*sign
		}},
		"fedadagrad": {(&FedAdagrad{ad}).Step, func(v, d2 float64) float64 { return v + d2 }},
	}
	// Large, then small updates: Yogi's v must shrink as well as grow.
	deltas := [][]float64{{1, -2, 0}, {0.5, 0.1, -0.3}, {0.01, -0.02, 0.001}, {0.01, 0.02, 0}}
	for name, r := range rules {
		st := &ServerState{d: 3}
		step := r.step(st)
		if st.err != nil || strings.Join(st.names, ",") != "m,v" {
			t.Fatalf("%s declares %q (%v), want m and v", name, st.names, st.err)
		}
		x := []float64{0.3, -0.1, 2}
		want := append([]float64(nil), x...)
		m, v := make([]float64, 3), []float64{1e-4, 1e-4, 1e-4}
		shrunk := false
		for _, d := range deltas {
			step(x, append([]float64(nil), d...))
			for j := range d {
				m[j] = 0.8*m[j] + 0.2*d[j]
				nv := r.v(v[j], d[j]*d[j])
				shrunk = shrunk || nv < v[j]
				v[j] = nv
				want[j] += 0.05 * m[j] / (math.Sqrt(v[j]) + 0.01)
			}
			for j := range x {
				if math.Abs(x[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
					t.Fatalf("%s: x[%d] = %v, want %v", name, j, x[j], want[j])
				}
			}
		}
		if name == "fedyogi" && !shrunk {
			t.Error("the updates never shrank Yogi's v: the test does not exercise its sign")
		}
		if saved := st.save(); math.Abs(saved[1].V[1]-v[1]) > 1e-12 {
			t.Errorf("%s: the declared v is %v, the step's %v: the state saved is not the state used", name, saved[1].V, v)
		}
	}
}

// A step that declares a name twice is refused when the run is planned.
func TestServerStepDeclaresOnce(t *testing.T) {
	s := fedAvgSetup(t, 3, &graph.Star{Prob: 1})
	twice := func(st *ServerState) StepFunc {
		st.Vec("m", 0)
		st.Scalar("m", 1)
		return func(x, delta []float64) {}
	}
	if _, _, err := DefaultFedAvg().PlanSteps(s, nil, twice); err == nil || !strings.Contains(err.Error(), `"m" twice`) {
		t.Fatalf("got %v, want an error naming m", err)
	}
}

// A server step's declared state is checked on load: a FedAvg server's
// state does not load into a FedAdam server, nor one with v of another
// length; a refused load changes nothing.
func TestServerStepStateRejectsMisfits(t *testing.T) {
	star := &graph.Star{Prob: 1}
	adam := &FedAdam{DefaultSecondMoment()}
	adam.Rounds, adam.EvalEvery, adam.Participation = 3, 1, 1
	parts := func(alg optim.Algorithm) optim.Stateful {
		f, _, err := alg.Plan(fedAvgSetup(t, 3, star))
		if err != nil {
			t.Fatal(err)
		}
		c, err := f(0)
		if err != nil {
			t.Fatal(err)
		}
		return c.(*optim.Fixed).Behaviour.(optim.Stateful)
	}
	avgState, err := parts(&adam.FedAvg).SaveState()
	if err != nil {
		t.Fatal(err)
	}
	server := parts(adam)
	before, err := server.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.LoadState(avgState); err == nil || !strings.Contains(err.Error(), "server step state") {
		t.Errorf("a FedAvg server's state loaded into a FedAdam server: %v", err)
	}
	var ms meanState
	if err := optim.DecodeState(before, &ms); err != nil {
		t.Fatal(err)
	}
	ms.Step[1].V = append(ms.Step[1].V, 1)
	ms.Step[0].V[0] = 7
	bad, err := optim.EncodeState(ms)
	if err != nil {
		t.Fatal(err)
	}
	if err := server.LoadState(bad); err == nil || !strings.Contains(err.Error(), `"v" has length`) {
		t.Errorf("a v of another length loaded: %v", err)
	}
	if after, _ := server.SaveState(); string(after) != string(before) {
		t.Error("a refused load changed the server")
	}
}
