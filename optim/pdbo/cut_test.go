package pdbo

import (
	"testing"

	"hgpsim/optim"
)

// A run without an outer loop cuts its SGP phase at evaluations into at
// most maxSGPParts parts that tile the phase, each continuing the delivery
// record of the one before; a run with outer steps is not cut.
func TestAlg1CutsTheSGPPhase(t *testing.T) {
	for _, c := range []struct {
		steps, rounds, eval, parts int
	}{
		{0, 600, 50, 12}, {0, 20000, 50, 20}, {0, 30, 10, 3}, {0, 600, 0, 1}, {0, 600, 600, 1}, {2, 600, 50, 1},
	} {
		a := &Alg1{Steps: c.steps, SGPRounds: c.rounds, SGPEval: c.eval, Track: true}
		p, err := a.Next(nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := optim.NewDeliveryRecord(2)
		parts, next := 0, 0
		for p != nil && p.Name == "sgp" && p.Step == 0 {
			parts++
			if p.Offset != next || p.TotalRounds() != c.rounds || (c.eval > 0 && p.Rounds%c.eval != 0 && p.Continued) {
				t.Fatalf("%+v: part %d covers [%d, %d) of %d rounds, want it to start at %d", c, parts, p.Offset, p.Offset+p.Rounds, p.TotalRounds(), next)
			}
			if parts > 1 && p.Delivered != rec {
				t.Fatalf("%+v: part %d does not continue the delivery record", c, parts)
			}
			next = p.Offset + p.Rounds
			stats := []optim.Stats{{ValN: 1, ValAcc: 0.5}}
			if p, err = a.Next(&optim.PhaseReport{Spec: p, Last: stats, Delivered: rec}); err != nil {
				t.Fatal(err)
			}
		}
		if parts != c.parts || next != c.rounds {
			t.Errorf("%+v: %d parts over %d rounds, want %d over %d", c, parts, next, c.parts, c.rounds)
		}
	}
}
