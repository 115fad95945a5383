package scenarios

import (
	"math"
	"testing"
)

// The work estimate mixes over the links up in a round: on a stochastic
// network LinkCount · mean δ̄ of them (graph.UpFraction), so the mixing
// flops grow linearly in the mean δ̄, while the memory estimate keeps
// every link.
func TestEstimateMixesOverLinksUp(t *testing.T) {
	at := func(delta string) Resources {
		sc, err := LoadWith("paper/personalization-stod.yaml", []Set{
			{Path: []string{"network", "delta_min"}, Value: delta},
			{Path: []string{"network", "delta_max"}, Value: delta}})
		if err != nil {
			t.Fatal(err)
		}
		return Estimate(sc)
	}
	lo, mid, hi := at("0.2"), at("0.6"), at("1")
	d1, d2 := hi.Flops-mid.Flops, mid.Flops-lo.Flops
	if !(d1 > 0) || math.Abs(d1-d2) > 1e-9*hi.Flops {
		t.Errorf("flops at mean δ̄ 0.2, 0.6, 1: %g, %g, %g; want equal positive steps, got %g and %g", lo.Flops, mid.Flops, hi.Flops, d2, d1)
	}
	if lo.PeakBytes != hi.PeakBytes {
		t.Errorf("peak memory depends on δ̄: %d at 0.2, %d at 1", lo.PeakBytes, hi.PeakBytes)
	}
}

// A ring whose links are up with prob mixes over prob of them too.
func TestEstimateMixesOverRingLinksUp(t *testing.T) {
	at := func(prob string) Resources {
		sc, err := LoadWith("paper/personalization-stod.yaml", []Set{
			{Path: []string{"network"}, Value: "{kind: ring, prob: " + prob + "}"}})
		if err != nil {
			t.Fatal(err)
		}
		return Estimate(sc)
	}
	lo, mid, hi := at("0.2"), at("0.6"), at("1")
	d1, d2 := hi.Flops-mid.Flops, mid.Flops-lo.Flops
	if !(d1 > 0) || math.Abs(d1-d2) > 1e-9*hi.Flops {
		t.Errorf("flops at prob 0.2, 0.6, 1: %g, %g, %g; want equal positive steps", lo.Flops, mid.Flops, hi.Flops)
	}
}
