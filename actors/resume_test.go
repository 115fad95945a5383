package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"hgpsim/optim"
	"hgpsim/optim/pdbo"
)

// copyRecord returns a deep copy of r (a part continues its record in
// place).
func copyRecord(r *optim.DeliveryRecord) *optim.DeliveryRecord {
	c := optim.NewDeliveryRecord(len(r.Online))
	c.Rounds = r.Rounds
	copy(c.Online, r.Online)
	for i := range r.WeightSum {
		copy(c.WeightSum[i], r.WeightSum[i])
		copy(c.Count[i], r.Count[i])
	}
	return c
}

// sameRecord says where two delivery records differ.
func sameRecord(want, got *optim.DeliveryRecord) error {
	if want == nil || got == nil || want.Rounds != got.Rounds {
		return fmt.Errorf("records %v and %v", got, want)
	}
	if !sameBits(want.Online, got.Online) {
		return fmt.Errorf("online counts %v, want %v", got.Online, want.Online)
	}
	for i := range want.Count {
		if !sameBits(want.Count[i], got.Count[i]) || !sameBits(want.WeightSum[i], got.WeightSum[i]) {
			return fmt.Errorf("sender %d: %v / %v, want %v / %v", i, got.Count[i], got.WeightSum[i], want.Count[i], want.WeightSum[i])
		}
	}
	return nil
}

// TestWorkersResumeTrackedPart resumes a tracked SGP phase cut in three
// parts after its first part, as from a checkpoint taken inside the phase
// (the late messages and the delivery record so far come with the part):
// over 1, 2 and 8 workers, which never ran the first part, the rounds and
// the phase's delivery record are those of the same resumed part in one
// process. (The clients here load no state, so the resumed rounds are not
// those of the whole phase: run's resume tests check that.)
func TestWorkersResumeTrackedPart(t *testing.T) {
	nw := network(t, testKind, testN)
	nw.Failures = append(nw.Failures, testDelay)
	specs := optim.SplitPhase(optim.PhaseSpec{Name: "sgp", Rounds: 24, EvalEvery: 4, Tick: optim.Continue, Track: true}, 8)
	if len(specs) != 3 {
		t.Fatalf("%d parts", len(specs))
	}
	local := func(p optim.Program) *recorder {
		t.Helper()
		_, bs := sgpClients(t, testN, pdbo.AfterComm)
		rt := newRuntime(t, nw, bs, Options{RoundTimeout: 10 * time.Second})
		var rec recorder
		if _, err := rt.Execute(context.Background(), p, &rec); err != nil {
			t.Fatal(err)
		}
		return &rec
	}
	first := local(&parts{specs: specs[:1]}).reports[0] // the checkpoint
	if first.Delivered == nil || first.Delivered.Rounds != 8 {
		t.Fatalf("the first part recorded %+v", first.Delivered)
	}
	resumed := func() *parts {
		p := &parts{specs: append([]optim.PhaseSpec(nil), specs[1:]...)}
		p.specs[0].Late, p.specs[0].Delivered = first.Late, copyRecord(first.Delivered)
		return p
	}
	want := local(resumed())
	if want.reports[1].Delivered.Rounds != 24 {
		t.Fatalf("the resumed phase's record covers %d rounds, want 24", want.reports[1].Delivered.Rounds)
	}
	_, addrs := startWorkers(t, 8)
	for _, k := range []int{1, 2, 8} {
		rt, err := New(nw, nil, Options{RoundTimeout: 10 * time.Second, Workers: addrs[:k], Scenario: []byte("delay")})
		if err != nil {
			t.Fatal(err)
		}
		var got recorder
		_, err = rt.Execute(context.Background(), resumed(), &got)
		rt.Close()
		if err != nil {
			t.Fatalf("%d workers: %v", k, err)
		}
		if len(got.events) != len(want.events) || len(got.reports) != len(want.reports) {
			t.Fatalf("%d workers: %d events and %d reports, want %d and %d", k, len(got.events), len(got.reports), len(want.events), len(want.reports))
		}
		for e := range want.events {
			a, b := want.events[e], got.events[e]
			if a.Round != b.Round || a.Traffic != b.Traffic {
				t.Fatalf("%d workers, event %d: round %d, %+v; want %d, %+v", k, e, b.Round, b.Traffic, a.Round, a.Traffic)
			}
			if err := sameEvaluation(&a, &b); err != nil {
				t.Fatalf("%d workers, event %d: %v", k, e, err)
			}
		}
		for p := range want.reports {
			if err := sameRecord(want.reports[p].Delivered, got.reports[p].Delivered); err != nil {
				t.Fatalf("%d workers, part %d: %v", k, p, err)
			}
		}
	}
}
