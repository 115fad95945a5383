package optim

import (
	"math"
	"runtime"
	"testing"

	"hgpsim/internal/rng"
)

// pushSum32Run runs float32 push-sum averaging from fixed random values on
// the stochastic directed network, on a sequential driver with the given
// parallelism (hide: the clients mix on their own, as in the actor
// runtime), and returns the clients' values and the exact average of the
// starting vectors, computed in float64.
func pushSum32Run(t *testing.T, n, d, rounds, parallel int, hide bool) ([][]float32, []float64) {
	t.Helper()
	nw := buildNet(t, net("stochastic-directed"), n, 3)
	r := rng.New(9, rng.Global, rng.PurposeInit)
	clients := make([]*PushSum[float32], n)
	bs := make([]Behaviour, n)
	avg := make([]float64, d)
	for i := range clients {
		v := make([]float32, d)
		for k := range v {
			v[k] = float32(10 * r.NormFloat64())
			avg[k] += float64(v[k]) / float64(n)
		}
		clients[i] = NewPushSum(i, n, v)
		bs[i] = clients[i]
		if hide {
			bs[i] = hidden{clients[i]}
		}
	}
	td := newTestDriver(t, nw)
	td.d.SetParallel(parallel)
	if err := td.run("pushsum", rounds, bs); err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, n)
	for i, c := range clients {
		out[i] = append([]float32(nil), c.Value()...)
	}
	return out, avg
}

// Float32 push-sum reaches the exact average within float32 precision on a
// random directed network, and stays there: ω is float64 and mixed with
// the float32-rounded weights z is mixed with, so the rounding of the
// weights cancels in x = z/ω, and what remains is the rounding of the
// sums, some tens of ulps after thousands of rounds. (Mixing ω with the
// exact weights instead drifts by 0.25 ε a round: 3e-5 after 1,000
// rounds, 9e-5 after 3,000, which this test fails.)
func TestPushSum32ReachesAverage(t *testing.T) {
	const n, d = 20, 300
	for _, rounds := range []int{1, 300, 3000} {
		got, avg := pushSum32Run(t, n, d, rounds, 1, false)
		worst, norm := 0.0, 0.0
		for k := range avg {
			norm = math.Max(norm, math.Abs(avg[k]))
		}
		for _, v := range got {
			for k := range v {
				worst = math.Max(worst, math.Abs(float64(v[k])-avg[k]))
			}
		}
		rel := worst / norm
		t.Logf("after %d rounds: max |x − avg| / max |avg| = %.3g (float32 ε = %.3g)", rounds, rel, 0x1p-23)
		switch {
		case rounds == 1 && rel < 1e-2:
			t.Fatalf("after one round the error is already %.3g: the test would prove nothing", rel)
		case rounds > 1 && rel > 1e-5:
			t.Errorf("float32 push-sum ends %.3g (relative) from the exact average after %d rounds", rel, rounds)
		}
	}
}

// Float32 push-sum gives the same bits on the driver's blocked mixing at
// every parallelism and GOMAXPROCS as with clients that mix on their own
// (the actor runtime's way).
func TestPushSum32IsBitIdentical(t *testing.T) {
	const n, d, rounds = 23, 2*512 + 77, 40 // three float32 blocks, the last partial
	ref, _ := pushSum32Run(t, n, d, rounds, 1, true)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		for _, c := range []struct {
			p    int
			hide bool
		}{{1, false}, {4, false}, {64, false}, {3, true}} {
			got, _ := pushSum32Run(t, n, d, rounds, c.p, c.hide)
			for i := range ref {
				for k := range ref[i] {
					if math.Float32bits(got[i][k]) != math.Float32bits(ref[i][k]) {
						t.Fatalf("GOMAXPROCS %d, parallel %d, hidden %v: client %d coordinate %d: %v, want %v",
							procs, c.p, c.hide, i, k, got[i][k], ref[i][k])
					}
				}
			}
		}
	}
}

// StepDebias in float32: the step's product rounded to float32, the
// debiasing's in float64 and then rounded, as Debias computes it.
func TestStepDebias32(t *testing.T) {
	r := rng.New(3, rng.Global, rng.PurposeInit)
	for _, n := range []int{0, 1, 3, 4, 5, 17, 1000} {
		z, g := make([]float32, n), make([]float32, n)
		for i := range z {
			z[i], g[i] = float32(r.NormFloat64()), float32(1e3*r.NormFloat64())
		}
		c, inv := -0.25*r.Float64(), 1/(0.1+r.Float64())
		wantZ, wantX := make([]float32, n), make([]float32, n)
		for i := range z {
			wantZ[i] = z[i] + float32(float32(c)*g[i])
			wantX[i] = float32(inv * float64(wantZ[i]))
		}
		x := make([]float32, n)
		if !StepDebias(z, x, c, g, inv) {
			t.Fatalf("n = %d: finite values reported non-finite", n)
		}
		for i := range z {
			if math.Float32bits(z[i]) != math.Float32bits(wantZ[i]) || math.Float32bits(x[i]) != math.Float32bits(wantX[i]) {
				t.Fatalf("n = %d, coordinate %d: z %v x %v, want %v and %v", n, i, z[i], x[i], wantZ[i], wantX[i])
			}
		}
		if n > 0 {
			z[n-1] = float32(math.Inf(1))
			if StepDebias(z, x, c, g, inv) || AllFinite(x) {
				t.Errorf("n = %d: an infinite z passed as finite", n)
			}
		}
	}
}

// restartable is a float32 push-sum behaviour that a crash restarts.
type restartable struct{ *PushSum[float32] }

func (r restartable) Reinit(*PhaseSpec, *Round) (Behaviour, error) { return r, nil }

// The crash-restart wrapper passes a float32 behaviour's mixes on, so that
// the driver's blocked mixing still does its mixing.
func TestReinitForwardsFloat32Mixes(t *testing.T) {
	b := restartable{NewPushSum(0, 2, []float32{1, 2})}
	c := Reinitializing(&Fixed{Behaviour: b}, b)
	got, err := c.Enter(&PhaseSpec{Name: "pushsum"})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := got.(Premixer[float32])
	if !ok {
		t.Fatalf("the wrapped float32 behaviour is a %T, not a Premixer[float32]", got)
	}
	in := []Message{{From: 1, Weight: 0.5, Payload: NewPayload(KindModel, []float32{3, 4}, 1)}}
	ms := p.Premix(&Round{}, in)
	if len(ms) != 1 || len(ms[0].Terms) != 1 || ms[0].Terms[0].Coef != 0.5 || &ms[0].Terms[0].Vec[0] != &in[0].Vec32[0] {
		t.Errorf("mixes %+v", ms)
	}
}

// A float32 client's Observe hands out its x as Stats.X32, a view of the
// value and not a widened copy, and the consensus reads it widened.
func TestPushSum32ObservesX32View(t *testing.T) {
	c := NewPushSum(0, 2, []float32{1.5, -2.25, 3})
	st := c.Observe()
	if st.X != nil || len(st.X32) != 3 {
		t.Fatalf("Observe of a float32 client: X %v, X32 %v; want X nil, X32 of length 3", st.X, st.X32)
	}
	if &st.X32[0] != &c.Value()[0] {
		t.Fatal("Observe copied x: Stats.X32 is not a view of the client's value")
	}
	if !st.HasX() {
		t.Fatal("Stats with X32 report no x")
	}
}
