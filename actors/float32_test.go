package actors

import (
	"context"
	"math"
	"testing"
	"time"

	"hgpsim/internal/rng"
	"hgpsim/optim"
)

// pushSum32D is the length of the float32 push-sum vectors: over a few
// float32 mixing blocks, with a partial one.
const pushSum32D = 1100

// pushSum32Clients returns n float32 push-sum averaging clients on fixed
// random vectors.
func pushSum32Clients(n, d int) ([]*optim.PushSum[float32], []optim.Behaviour) {
	r := rng.New(4, rng.Global, rng.PurposeInit)
	cs := make([]*optim.PushSum[float32], n)
	bs := make([]optim.Behaviour, n)
	for i := range cs {
		v := make([]float32, d)
		for k := range v {
			v[k] = float32(r.NormFloat64())
		}
		cs[i] = optim.NewPushSum(i, n, v)
		bs[i] = cs[i]
	}
	return cs, bs
}

func pushSum32Phases() *optim.Phases {
	return &optim.Phases{{Name: "pushsum", Rounds: 15, EvalEvery: 5, Tick: optim.Continue}}
}

// Float32 push-sum gives the same bits on the sequential driver, on the
// actor runtime in process (one actor, and groups) and over one and two
// worker processes, whose float32 payloads cross the wire: the same
// states, traffic (4 bytes an element) and evaluations.
func TestFloat32PushSumAcrossDrivers(t *testing.T) {
	const n = testN
	nw := network(t, testKind, n)
	seqC, seqB := pushSum32Clients(n, pushSum32D)
	var want recorder
	factory, _ := optim.FixedClients(seqB)
	seq, err := optim.NewSequential(nw, factory)
	if err != nil {
		t.Fatal(err)
	}
	seq.SetParallel(3)
	wantTr, err := seq.Execute(context.Background(), pushSum32Phases(), &want)
	if err != nil {
		t.Fatal(err)
	}
	if wantTr.Messages == 0 || wantTr.Bytes != wantTr.Messages*(4*pushSum32D+16) {
		t.Fatalf("traffic %+v: want 4·%d + 16 bytes a message", wantTr, pushSum32D)
	}
	for _, groups := range []int{1, 4} {
		actC, actB := pushSum32Clients(n, pushSum32D)
		var got recorder
		rt := newRuntime(t, nw, actB, Options{RoundTimeout: 10 * time.Second, Groups: groups})
		tr, err := rt.Execute(context.Background(), pushSum32Phases(), &got)
		if err != nil {
			t.Fatal(err)
		}
		if tr != wantTr {
			t.Errorf("%d groups: traffic %+v, sequential %+v", groups, tr, wantTr)
		}
		for i := range seqC {
			a, b := seqC[i].Value(), actC[i].Value()
			for k := range a {
				if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
					t.Fatalf("%d groups, client %d, coordinate %d: %v, sequential %v", groups, i, k, b[k], a[k])
				}
			}
		}
		if len(got.events) != len(want.events) {
			t.Fatalf("%d groups: %d events, sequential %d", groups, len(got.events), len(want.events))
		}
		for e := range want.events {
			for i, a := range want.events[e].Clients {
				b := got.events[e].Clients[i]
				if a.X != nil || len(a.X32) != pushSum32D || !sameBits32(a.X32, b.X32) || math.Float64bits(a.Weight) != math.Float64bits(b.Weight) {
					t.Fatalf("%d groups, event %d, client %d: the evaluations differ", groups, e, i)
				}
			}
		}
	}
	_, addrs := startWorkers(t, 2)
	for k := 1; k <= 2; k++ {
		rt, err := New(nw, nil, Options{RoundTimeout: 10 * time.Second, Workers: addrs[:k], Scenario: []byte("pushsum32")})
		if err != nil {
			t.Fatalf("%d workers: %v", k, err)
		}
		var got recorder
		tr, err := rt.Execute(context.Background(), pushSum32Phases(), &got)
		wt := rt.Wire()
		rt.Close()
		if err != nil {
			t.Fatalf("%d workers: %v", k, err)
		}
		if tr != wantTr || (k > 1) != (wt.PeerBytes > 0) {
			t.Errorf("%d workers: traffic %+v (sequential %+v), %d bytes between workers", k, tr, wantTr, wt.PeerBytes)
		}
		if len(got.events) != len(want.events) {
			t.Fatalf("%d workers: %d events, sequential %d", k, len(got.events), len(want.events))
		}
		for e := range want.events {
			if err := sameEvaluation(&want.events[e], &got.events[e]); err != nil {
				t.Fatalf("%d workers, event %d: %v", k, e, err)
			}
		}
	}
}

// sameBits32 reports whether a and b hold the same float32 bits.
func sameBits32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
			return false
		}
	}
	return true
}
