package optim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"hgpsim/internal/rng"
)

// hidden hides a behaviour's Premixer, so that the driver calls its
// Receive (which mixes on its own, as in the actor runtime).
type hidden struct{ Behaviour }

// pushSumRun runs push-sum from fixed random values on a sequential driver
// with the given parallelism and returns every client's value. With hide
// the clients mix on their own instead of in the driver's blocked mixing.
func pushSumRun(t *testing.T, parallel int, hide bool) [][]float64 {
	t.Helper()
	const n, d, rounds = 23, 2*mixBlock + 77, 40
	nw := buildNet(t, net("stochastic-directed"), n, 3)
	r := rng.New(9, rng.Global, rng.PurposeInit)
	clients := make([]*PushSum[float64], n)
	bs := make([]Behaviour, n)
	for i := range clients {
		v := make([]float64, d)
		for k := range v {
			v[k] = r.NormFloat64()
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
	out := make([][]float64, n)
	for i, c := range clients {
		out[i] = append([]float64(nil), c.Value()...)
	}
	return out
}

// TestSequentialParallelIsBitIdentical compares push-sum on the driver's
// blocked mixing, at several parallelisms, with clients that mix on their
// own, bit for bit.
func TestSequentialParallelIsBitIdentical(t *testing.T) {
	ref := pushSumRun(t, 1, true)
	for _, c := range []struct {
		p    int
		hide bool
	}{{1, false}, {2, false}, {5, false}, {64, false}, {3, true}} {
		p := c.p
		got := pushSumRun(t, p, c.hide)
		for i := range ref {
			for k := range ref[i] {
				if math.Float64bits(got[i][k]) != math.Float64bits(ref[i][k]) {
					t.Fatalf("parallel %d (own mixing %v): client %d coordinate %d is %v, one goroutine mixing on its own gives %v", p, c.hide, i, k, got[i][k], ref[i][k])
				}
			}
		}
	}
}

// failing fails (or panics) in Receive at round at.
type failing struct {
	at    int
	panic bool
}

func (f *failing) Send(*Round, Outbox) error { return nil }
func (f *failing) Receive(r *Round, _ []Message) error {
	if r.Index == f.at {
		if f.panic {
			panic("boom")
		}
		return errors.New("bad state")
	}
	return nil
}

// TestSequentialParallelErrorIsTheLowestClient checks that when several
// clients fail in the same round the error names the lowest of them, as on
// one goroutine, and that a panic becomes that client's error.
func TestSequentialParallelErrorIsTheLowestClient(t *testing.T) {
	const n = 12
	nw := buildNet(t, net("stochastic-directed"), n, 3)
	for _, panics := range []bool{false, true} {
		for _, p := range []int{1, 4} {
			bs := make([]Behaviour, n)
			for i := range bs {
				bs[i] = &failing{at: -1}
			}
			bs[9] = &failing{at: 2, panic: panics}
			bs[5] = &failing{at: 2, panic: panics}
			bs[7] = &failing{at: 1, panic: panics}
			td := newTestDriver(t, nw)
			td.d.SetParallel(p)
			err := td.run("fail", 5, bs)
			var ce *ClientError
			if !errors.As(err, &ce) {
				t.Fatalf("parallel %d, panics %v: got %v, want a ClientError", p, panics, err)
			}
			if ce.Client != 7 || ce.Round != 1 {
				t.Errorf("parallel %d, panics %v: error names client %d round %d, want client 7 round 1", p, panics, ce.Client, ce.Round)
			}
			if want := map[bool]string{false: "bad state", true: "boom"}[panics]; !strings.Contains(err.Error(), want) {
				t.Errorf("parallel %d: error %q does not say %q", p, err, want)
			}
		}
	}
}

// TestAllFinite checks the one-pass finiteness test, including the case
// where Σv² overflows although every coordinate is finite.
func TestAllFinite(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want bool
	}{
		{nil, true},
		{[]float64{1, -2, 3}, true},
		{[]float64{1e200, -1e200}, true}, // Σv² overflows
		{[]float64{1, math.NaN(), 3}, false},
		{[]float64{1, math.Inf(-1)}, false},
		{[]float64{1e200, math.Inf(1)}, false},
		{[]float64{math.MaxFloat64, math.NaN()}, false},
	} {
		if got := AllFinite(c.v); got != c.want {
			t.Errorf("AllFinite(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}
