package faults

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/optim"
)

// faultyPushSum runs rounds of push-sum averaging among n clients on a
// stochastic directed network (seed nwSeed), client i's behaviour wrapped
// in the faults of faulty[i], through the public driver. It returns the
// clients and the exact average of their starting vectors.
func faultyPushSum(t *testing.T, n, d, rounds int, nwSeed uint64, faulty map[int]Fault) ([]*optim.PushSum[float64], []float64) {
	t.Helper()
	nw, err := graph.Build(registry.Choose[graph.Topology]("stochastic-directed"), n, nwSeed)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(5, rng.Global, rng.PurposeInit)
	avg := make([]float64, d)
	cs := make([]*optim.PushSum[float64], n)
	factory := func(i int) (optim.Client, error) {
		f := []Fault{}
		if fault, ok := faulty[i]; ok {
			f = append(f, fault)
		}
		return WithFaults(&optim.Fixed{Behaviour: cs[i]}, optim.Env{Seed: 1, N: n, Self: i}, f), nil
	}
	for i := range cs {
		v := make([]float64, d)
		for k := range v {
			v[k] = 10 * r.NormFloat64()
		}
		floats.AddScaled(avg, 1/float64(n), v)
		cs[i] = optim.NewPushSum(i, n, v)
	}
	drv, err := optim.NewSequential(nw, factory)
	if err != nil {
		t.Fatal(err)
	}
	phases := optim.Phases{{Name: "pushsum", Rounds: rounds, Tick: optim.Continue}}
	if _, err := drv.Execute(context.Background(), &phases, optim.NoSink{}); err != nil {
		t.Fatal(err)
	}
	return cs, avg
}

// A straggler keeps its mass between its sending rounds, so push-sum still
// reaches the exact average (a fault that dropped its messages would lose
// mass and settle elsewhere), and its p̄ counts the weights it really used.
func TestStragglerKeepsMass(t *testing.T) {
	const n, d, rounds = 10, 4, 600
	slow := &Straggler{Every: 4}
	cs, avg := faultyPushSum(t, n, d, rounds, 3, map[int]Fault{2: slow, 7: slow})
	worst := 0.0
	for _, c := range cs {
		worst = math.Max(worst, floats.Distance(c.Value(), avg, 2)/floats.Norm(avg, 2))
	}
	if worst > 1e-10 {
		t.Errorf("with stragglers push-sum ends %.3g from the exact average", worst)
	}
	// Client 2 sent to others in 1 round of 4, so its p̄ toward the others
	// is about a quarter of an ordinary client's, and its row sums to 1.
	p2, _ := cs[2].Estimates()
	p0, _ := cs[0].Estimates()
	other2, other0 := 0.0, 0.0
	for j := range p2 {
		if j != 2 {
			other2 += p2[j]
		}
		if j != 0 {
			other0 += p0[j]
		}
	}
	if math.Abs(floats.Sum(p2)-1) > 1e-12 || !(other2 < 0.4*other0) || !(other2 > 0.1*other0) {
		t.Errorf("straggler's p̄ row: sum %v, mass to others %v vs %v for client 0", floats.Sum(p2), other2, other0)
	}
}

// A byzantine client corrupts the model part of its messages but never the
// push-sum mass: the total mass Σω stays n, while the clients no longer
// agree on the average of the starting vectors.
func TestByzantineCorruptsModelNotMass(t *testing.T) {
	const n, d, rounds = 8, 3, 300
	for _, scale := range []float64{1, -1} {
		cs, avg := faultyPushSum(t, n, d, rounds, 4, map[int]Fault{5: &Byzantine{Scale: scale}})
		mass := 0.0
		worst := 0.0
		for _, c := range cs {
			mass += c.Observe().Weight
			worst = math.Max(worst, floats.Distance(c.Value(), avg, 2)/floats.Norm(avg, 2))
		}
		if math.Abs(mass-n) > 1e-9 {
			t.Errorf("scale %v: total mass %v, want %d", scale, mass, n)
		}
		switch {
		case scale == 1 && worst > 1e-10:
			t.Errorf("a byzantine client with scale 1 changed the result (error %.3g)", worst)
		case scale == -1 && worst < 1e-3:
			t.Errorf("a byzantine client with scale -1 left the average intact (error %.3g)", worst)
		}
	}
}

// recording is a fault that only notes the environment it is built with.
type recording struct{ seen []optim.Env }

func (r *recording) Validate() error { return nil }
func (r *recording) Wrap(b optim.Behaviour, env optim.Env) optim.Behaviour {
	r.seen = append(r.seen, env)
	return b
}

// WithFaults builds a client's faults once per phase with the client's
// environment and that phase, and not at all for a phase without a
// behaviour.
func TestWithFaultsGivesEachPhaseItsEnv(t *testing.T) {
	rec := &recording{}
	inner := &optim.Fixed{Behaviour: optim.NewPushSum(2, 4, []float64{1})}
	c := WithFaults(inner, optim.Env{Seed: 7, N: 4, Self: 2}, []Fault{rec})
	phases := []*optim.PhaseSpec{{Name: "a", Rounds: 3}, {Name: "b", Rounds: 1}}
	for _, p := range phases {
		if _, err := c.Enter(p); err != nil {
			t.Fatal(err)
		}
	}
	inner.Behaviour = nil
	if _, err := c.Enter(&optim.PhaseSpec{Name: "idle"}); err != nil {
		t.Fatal(err)
	}
	if len(rec.seen) != len(phases) {
		t.Fatalf("the fault was built %d times, want once per phase with a behaviour (%d)", len(rec.seen), len(phases))
	}
	for k, e := range rec.seen {
		if e.Seed != 7 || e.N != 4 || e.Self != 2 || e.Phase != phases[k] {
			t.Errorf("phase %s: the fault saw %+v", phases[k].Name, e)
		}
	}
	if WithFaults(inner, optim.Env{}, nil) != optim.Client(inner) {
		t.Error("a client without faults was wrapped")
	}
}
