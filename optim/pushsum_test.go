package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
)

func TestPushSumReachesExactAverage(t *testing.T) {
	const n, d = 20, 5
	for _, spec := range []netSpec{
		net("stochastic-directed"), net("stochastic-undirected"),
		{Name: "ring", Params: &graph.Ring{Prob: 0.5}},
	} {
		t.Run(spec.Name, func(t *testing.T) {
			nw := buildNet(t, spec, n, 11)
			r := rng.New(5, rng.Global, rng.PurposeInit)
			avg := make([]float64, d)
			clients := make([]*PushSum[float64], n)
			b := make([]Behaviour, n)
			for i := range clients {
				v := make([]float64, d)
				for k := range v {
					v[k] = 10 * r.NormFloat64()
				}
				floats.AddScaled(avg, 1/float64(n), v)
				clients[i] = NewPushSum(i, n, v)
				b[i] = clients[i]
			}
			drv := newTestDriver(t, nw)
			rounds := 300
			if spec.Name == "ring" {
				rounds = 3000 // a ring mixes in O(n²) rounds
			}
			relErr := func() float64 {
				worst := 0.0
				for _, c := range clients {
					worst = math.Max(worst, floats.Distance(c.Value(), avg, 2)/floats.Norm(avg, 2))
				}
				return worst
			}
			if err := drv.run("pushsum", 1, b); err != nil {
				t.Fatal(err)
			}
			if e := relErr(); e < 1e-3 {
				t.Fatalf("after one round the error is already %g: the test would prove nothing", e)
			}
			if err := drv.run("pushsum", rounds-1, b); err != nil {
				t.Fatal(err)
			}
			e := relErr()
			t.Logf("max relative error after %d rounds: %.3g", rounds, e)
			if e > 1e-10 {
				t.Errorf("push-sum relative error %.3g > 1e-10 after %d rounds", e, rounds)
			}
		})
	}
}

// TestEstimatesMatchExpectations checks Alg. 2's p̄_ij and δ̄_{j→i} against
// the exact expectations, within binomial error.
func TestEstimatesMatchExpectations(t *testing.T) {
	const n, T = 12, 4000
	for _, spec := range []netSpec{
		net("stochastic-directed"),
		{Name: "stochastic-undirected", Params: &graph.Stochastic{DeltaMin: 0.2, DeltaMax: 0.9}},
	} {
		t.Run(spec.Name, func(t *testing.T) {
			nw := buildNet(t, spec, n, 21)
			clients := make([]*PushSum[float64], n)
			b := make([]Behaviour, n)
			for i := range clients {
				clients[i] = NewPushSum(i, n, []float64{float64(i)})
				b[i] = clients[i]
			}
			if err := runOnce(t, nw, "pushsum", T, b); err != nil {
				t.Fatal(err)
			}
			pTrue := nw.ExpectedPushWeights()
			var worstP, worstD float64
			for i, c := range clients {
				pBar, deltaBar := c.Estimates()
				for j := 0; j < n; j++ {
					// δ̄_{j→i}: a binomial frequency.
					q := nw.Delta(j, i)
					se := math.Sqrt(q * (1 - q) / T)
					if z := math.Abs(deltaBar[j]-q) / math.Max(se, 1e-12); z > 5 {
						t.Errorf("δ̂_{%d→%d} = %.4f, true %.4f (%.1f standard errors)", j, i, deltaBar[j], q, z)
					}
					worstD = math.Max(worstD, math.Abs(deltaBar[j]-q))
					// p̄_ij: a mean of values in [0, δ]; its variance is at most
					// E[p²] − p̄² ≤ p̄(1 − p̄).
					p := pTrue[i][j]
					seP := math.Sqrt(p * (1 - p) / T)
					if z := math.Abs(pBar[j]-p) / math.Max(seP, 1e-12); z > 5 {
						t.Errorf("p̂_%d%d = %.5f, true %.5f (%.1f standard-error bounds)", i, j, pBar[j], p, z)
					}
					worstP = math.Max(worstP, math.Abs(pBar[j]-p))
				}
			}
			t.Logf("after %d rounds: max |p̂−p̄| = %.4f, max |δ̂−δ̄| = %.4f", T, worstP, worstD)
		})
	}
}

// TestStepDebiasIsFourPasses checks the fused SGP step against the passes
// it replaces, bit for bit, and its finiteness verdict against AllFinite.
func TestStepDebiasIsFourPasses(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 3, 4, 5, 17, 1000} {
		for _, special := range []float64{0, math.Inf(1), math.NaN(), 1e308} {
			z := make([]float64, n)
			g := make([]float64, n)
			for i := range z {
				z[i], g[i] = r.NormFloat64(), r.NormFloat64()*1e3
			}
			if n > 0 && special != 0 {
				z[r.IntN(n)] = special
			}
			c, inv := -0.25*r.Float64(), 1/(0.1+r.Float64())
			if special == 1e308 {
				inv = 10 // overflows x but not z
			}
			wantZ := append([]float64(nil), z...)
			psi := make([]float64, n)
			floats.ScaleTo(psi, c, g)
			floats.Add(wantZ, psi)
			wantX := make([]float64, n)
			floats.ScaleTo(wantX, inv, wantZ)
			wantOK := AllFinite(wantX)

			x := make([]float64, n)
			ok := StepDebias(z, x, c, g, inv)
			if ok != wantOK {
				t.Errorf("n=%d special=%v: finite %v, want %v", n, special, ok, wantOK)
			}
			for i := range z {
				if math.Float64bits(z[i]) != math.Float64bits(wantZ[i]) && !(math.IsNaN(z[i]) && math.IsNaN(wantZ[i])) {
					t.Fatalf("n=%d special=%v: z[%d] = %v, want %v", n, special, i, z[i], wantZ[i])
				}
				if math.Float64bits(x[i]) != math.Float64bits(wantX[i]) && !(math.IsNaN(x[i]) && math.IsNaN(wantX[i])) {
					t.Fatalf("n=%d special=%v: x[%d] = %v, want %v", n, special, i, x[i], wantX[i])
				}
			}
		}
	}
}

// pushSumClients returns n push-sum clients on random vectors and their
// exact average.
func pushSumClients(n, d int) ([]*PushSum[float64], []Behaviour, []float64) {
	r := rng.New(5, rng.Global, rng.PurposeInit)
	avg := make([]float64, d)
	cs := make([]*PushSum[float64], n)
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
