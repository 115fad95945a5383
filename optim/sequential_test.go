package optim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"hgpsim/internal/rng"
)

// pushSumRun runs push-sum from fixed random values on a sequential driver
// with the given parallelism and returns every client's value.
func pushSumRun(t *testing.T, parallel int) [][]float64 {
	t.Helper()
	const n, d, rounds = 23, 7, 40
	nw := buildNet(t, net("stochastic-directed"), n, 3)
	r := rng.New(9, rng.Global, rng.PurposeInit)
	clients := make([]*PushSum, n)
	bs := make([]Behaviour, n)
	for i := range clients {
		v := make([]float64, d)
		for k := range v {
			v[k] = r.NormFloat64()
		}
		clients[i] = NewPushSum(i, n, v)
		bs[i] = clients[i]
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

func TestSequentialParallelIsBitIdentical(t *testing.T) {
	ref := pushSumRun(t, 1)
	for _, p := range []int{2, 5, 64} {
		got := pushSumRun(t, p)
		for i := range ref {
			for k := range ref[i] {
				if math.Float64bits(got[i][k]) != math.Float64bits(ref[i][k]) {
					t.Fatalf("parallel %d: client %d coordinate %d is %v, one goroutine gives %v", p, i, k, got[i][k], ref[i][k])
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
