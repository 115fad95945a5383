package optim

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
)

// pushSumClients returns n push-sum clients on random vectors and their
// exact average.
func pushSumClients(n, d int) ([]*PushSum, []Behaviour, []float64) {
	r := rng.New(5, rng.Global, rng.PurposeInit)
	avg := make([]float64, d)
	cs := make([]*PushSum, n)
	bs := make([]Behaviour, n)
	for i := range cs {
		v := make([]float64, d)
		for k := range v {
			v[k] = 10 * r.NormFloat64()
		}
		floats.AddScaled(avg, 1/float64(n), v)
		cs[i] = NewPushSum(i, n, v)
		bs[i] = cs[i]
	}
	return cs, bs, avg
}

// A straggler keeps its mass between its sending rounds, so push-sum still
// reaches the exact average (a fault that dropped its messages would lose
// mass and settle elsewhere), and its p̄ counts the weights it really used.
func TestStragglerKeepsMass(t *testing.T) {
	const n, d, rounds = 10, 4, 600
	nw := buildNet(t, net("stochastic-directed"), n, 3)
	cs, bs, avg := pushSumClients(n, d)
	slow := &Straggler{Every: 4}
	bs[2] = slow.Wrap(bs[2], 2, nil)
	bs[7] = slow.Wrap(bs[7], 7, nil)
	if err := runOnce(t, nw, "pushsum", rounds, bs); err != nil {
		t.Fatal(err)
	}
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
	nw := buildNet(t, net("stochastic-directed"), n, 4)
	for _, scale := range []float64{1, -1} {
		cs, bs, avg := pushSumClients(n, d)
		bs[5] = (&Byzantine{Scale: scale}).Wrap(bs[5], 5, nil)
		if err := runOnce(t, nw, "pushsum", rounds, bs); err != nil {
			t.Fatal(err)
		}
		mass := 0.0
		worst := 0.0
		for _, c := range cs {
			mass += c.ps.Omega
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

// Push-sum keeps its promise under the failure processes: with messages
// delayed, nodes churning and crashing (and recovering with their state),
// and a partition that heals, every node still reaches the exact average of
// the starting vectors once the network is strongly connected again —
// because no mass is ever lost: an offline node's links count as down for
// its neighbours, a delayed message is held, not dropped, and each side of
// the partition keeps its own mass. (run/testdata/golden checks the
// drivers agree under every failure process.)
func TestPushSumUnderFailures(t *testing.T) {
	const n, d, rounds = 12, 3, 1500
	nw := buildNet(t, net("stochastic-directed"), n, 8)
	err := nw.SetFailures([]registry.Choice[graph.Failure]{
		{Name: "delay", Params: &graph.Delay{Prob: 0.3, Min: 1, Max: 4}},
		{Name: "churn", Params: &graph.Churn{Nodes: []int{3, 7}, Share: 0.2, MeanOffline: 5}},
		{Name: "crash", Params: &graph.Crash{Nodes: []int{9}, At: 50, Recover: 120}},
		{Name: "partition", Params: &graph.Partition{Groups: [][]int{{0, 1, 2, 3, 4, 5}}, From: 0, To: 300}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, bs, avg := pushSumClients(n, d)
	drv := newTestDriver(t, nw)
	if err := drv.run("pushsum", 250, bs); err != nil {
		t.Fatal(err)
	}
	// During the partition the two sides cannot agree: the test would
	// prove nothing if they did.
	worst := func() float64 {
		w := 0.0
		for _, c := range cs {
			w = math.Max(w, floats.Distance(c.Value(), avg, 2)/floats.Norm(avg, 2))
		}
		return w
	}
	if e := worst(); e < 1e-3 {
		t.Fatalf("during the partition the error is already %.3g", e)
	}
	if err := drv.run("pushsum", rounds-250, bs); err != nil {
		t.Fatal(err)
	}
	if e := worst(); e > 1e-10 {
		t.Errorf("after the network healed, push-sum ends %.3g (relative) from the exact average", e)
	}
}
