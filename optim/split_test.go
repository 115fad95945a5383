package optim

import (
	"context"
	"math"
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/registry"
)

// recordSink keeps what a run reports.
type recordSink struct {
	rounds   [][2]int // (round, rounds) of every evaluation
	traffic  Traffic
	inFlight int // the most late messages a part left to the next
}

func (s *recordSink) Evaluated(ev *RoundEvent) error {
	s.rounds = append(s.rounds, [2]int{ev.Round, ev.Rounds})
	s.traffic.Add(ev.Traffic)
	return nil
}

func (s *recordSink) Finished(rep *PhaseReport) error {
	s.inFlight = max(s.inFlight, len(rep.Late))
	return nil
}

// A phase cut by SplitPhase gives the same results as the whole phase, bit
// for bit, with delayed messages crossing the cuts: the parts number their
// rounds as the whole phase, evaluate at the same rounds and carry the
// network's late messages over.
func TestSplitPhaseIsBitIdentical(t *testing.T) {
	const n, d, rounds, every = 12, 3, 95, 10
	nw := buildNet(t, net("stochastic-directed"), n, 8)
	if err := nw.SetFailures([]registry.Choice[graph.Failure]{
		{Name: "delay", Params: &graph.Delay{Prob: 0.5, Min: 1, Max: 6}},
	}); err != nil {
		t.Fatal(err)
	}
	whole := PhaseSpec{Name: "pushsum", Rounds: rounds, EvalEvery: every, Tick: Continue}
	run := func(phases Phases) ([]*PushSum[float64], *recordSink) {
		cs, bs, _ := pushSumClients(n, d)
		factory, _ := FixedClients(bs)
		drv, err := NewSequential(nw, factory)
		if err != nil {
			t.Fatal(err)
		}
		sink := &recordSink{}
		if _, err := drv.Execute(context.Background(), &phases, sink); err != nil {
			t.Fatal(err)
		}
		return cs, sink
	}
	parts := SplitPhase(whole, 2*every)
	if len(parts) != 5 || parts[4].Rounds != 15 || parts[4].Continued || !parts[3].Continued {
		t.Fatalf("SplitPhase: %+v", parts)
	}
	wantCs, want := run(Phases{whole})
	gotCs, got := run(Phases(parts))
	if got.inFlight == 0 {
		t.Error("no late message crossed a cut: the test proves nothing")
	}
	if len(got.rounds) != len(want.rounds) || got.traffic != want.traffic {
		t.Fatalf("parts reported %d evaluations and %+v, the whole phase %d and %+v", len(got.rounds), got.traffic, len(want.rounds), want.traffic)
	}
	for k := range want.rounds {
		if got.rounds[k] != want.rounds[k] {
			t.Errorf("evaluation %d: round/rounds %v, want %v", k, got.rounds[k], want.rounds[k])
		}
	}
	for i := range wantCs {
		for k, v := range wantCs[i].Value() {
			if g := gotCs[i].Value()[k]; math.Float64bits(g) != math.Float64bits(v) {
				t.Fatalf("client %d coordinate %d: %v, want %v", i, k, g, v)
			}
		}
	}
	if p := SplitPhase(PhaseSpec{Name: "x", Rounds: 50}, 10); len(p) != 1 {
		t.Errorf("a phase evaluated only at its end was cut: %+v", p)
	}
}
