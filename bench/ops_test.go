package bench

import (
	"testing"
	"time"
)

// TestOps runs every yardstick op (the VR-HGP round 50 times, so that its
// state must stay finite over a timing loop) and checks the timing.
func TestOps(t *testing.T) {
	ops, err := Ops()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"softmax-grad", "softmax-hvp", "mlp-grad", "mlp-hvp", "vrhgp-round"}
	if len(ops) != len(want) {
		t.Fatalf("%d ops, want %d", len(ops), len(want))
	}
	for k, op := range ops {
		if op.Name != want[k] || op.Shape == "" {
			t.Errorf("op %d is %q (%q), want %q with a shape", k, op.Name, op.Shape, want[k])
		}
	}
	round := ops[len(ops)-1]
	for range 50 {
		round.Run() // panics on a non-finite state
	}
	times := TimeOps(ops[:1], 3, time.Millisecond)
	if len(times) != 1 || times[0].Median <= 0 || times[0].Ms <= 0 {
		t.Errorf("implausible timing %+v", times)
	}
}
