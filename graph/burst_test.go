package graph

import (
	"math"
	"testing"

	"hgpsim/internal/registry"
)

// Bursty links keep the per-round probability but change state only at
// block boundaries, at most once per Burst rounds.
func TestBurstyLinks(t *testing.T) {
	const burst, ticks = 10, 40000
	for _, kind := range []string{"stochastic-directed", "stochastic-undirected"} {
		nw, err := buildSpec(testSpec{Kind: kind, N: 4, DeltaMin: 0.3, DeltaMax: 0.7, Burst: burst}, 5)
		if err != nil {
			t.Fatal(err)
		}
		var recv []int
		for i := 0; i < 4; i++ {
			for j := 0; j < 4; j++ {
				if i == j {
					continue
				}
				up, changes, prev := 0, 0, false
				for tick := uint64(0); tick < ticks; tick++ {
					recv = nw.Realize(i, tick, recv)
					now := contains(recv, j)
					if now {
						up++
					}
					if tick > 0 && now != prev {
						changes++
					}
					prev = now
				}
				p := nw.Delta(i, j)
				freq := float64(up) / ticks
				// Blocks, not rounds, are the independent draws.
				se := math.Sqrt(p * (1 - p) / (ticks / burst))
				if math.Abs(freq-p) > 4*se {
					t.Errorf("%s %d→%d: up %.4f of rounds, δ̄ = %.4f", kind, i, j, freq, p)
				}
				if changes > ticks/burst {
					t.Errorf("%s %d→%d: %d state changes in %d rounds with bursts of %d", kind, i, j, changes, ticks, burst)
				}
				if changes < ticks/burst/10 {
					t.Errorf("%s %d→%d: only %d state changes: links look frozen", kind, i, j, changes)
				}
			}
		}
	}
	for _, length := range []int{0, -1, MaxBurst + 1} {
		ring := &Ring{Prob: 1, RandomLinks: RandomLinks{Process: registry.Choice[LinkProcess]{Name: "burst", Params: &Burst{Length: length}}}}
		if _, err := Build(registry.Choice[Topology]{Name: "ring", Params: ring}, 4, 1); err == nil {
			t.Errorf("burst length %d accepted", length)
		}
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
