package graph

import (
	"math"
	"testing"

	"hgpsim/internal/registry"
)

// A fading link is up with probability δ̄·f(t): over windows of rounds the
// empirical frequency follows the schedule (here from 1 down to 0.25 over
// the first 40,000 rounds, then flat), within 4 standard errors.
func TestFadingFollowsItsSchedule(t *testing.T) {
	fading := &Fading{Schedule: [][2]float64{{0, 1}, {40000, 0.25}}}
	topo := &Stochastic{DeltaMin: 0.8, DeltaMax: 0.8, Directed: true,
		RandomLinks: RandomLinks{Process: registry.Choice[LinkProcess]{Name: "fading", Params: fading}}}
	nw, err := Build(registry.Choice[Topology]{Name: "stochastic-directed", Params: topo}, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	const window = 10000
	var recv []int
	for w := range 6 {
		up, want := 0, 0.0
		for tick := uint64(w * window); tick < uint64((w+1)*window); tick++ {
			recv = nw.Realize(0, tick, recv)
			if contains(recv, 1) {
				up++
			}
			f := 1 - 0.75*math.Min(float64(tick), 40000)/40000
			want += 0.8 * f
		}
		freq, p := float64(up)/window, want/window
		if se := math.Sqrt(p * (1 - p) / window); math.Abs(freq-p) > 4*se {
			t.Errorf("rounds %d–%d: up %.4f of the time, schedule says %.4f (4 SE %.4f)", w*window, (w+1)*window, freq, p, 4*se)
		}
	}
}
