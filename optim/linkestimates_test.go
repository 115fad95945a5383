package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// LinkEstimates holds, per link, the bits Estimates holds per client, for
// dense and per-link counts alike.
func TestLinkEstimatesMatchEstimates(t *testing.T) {
	for _, n := range []int{40, DenseCounts + 40} {
		for _, storage := range []string{"dense", "per link"} {
			if storage == "dense" && n > DenseCounts {
				continue
			}
			r := rand.New(rand.NewPCG(7, uint64(n)))
			p := NewPushSumPair(3, n, []float64{1, 2})
			if storage == "dense" {
				p.pSum, p.dCount = newLinkSums(n), newLinkSums(n)
			} else {
				p.pSum, p.dCount = linkSums{}, linkSums{}
			}
			for range 30 {
				var js []int
				var ws []float64
				for j := range n {
					if r.IntN(9) == 0 {
						js, ws = append(js, j), append(ws, r.Float64())
					}
				}
				p.pSum.addAll(js, ws)
				for range 3 {
					p.dCount.add(r.IntN(n), 1)
				}
				p.rounds++
			}
			pBar, deltaBar := p.Estimates()
			links, lp, ld := p.LinkEstimates()
			if (links == nil) != (storage == "dense") {
				t.Fatalf("n = %d, %s counts: links %v", n, storage, links)
			}
			if links == nil {
				if !slices.Equal(lp, pBar) || !slices.Equal(ld, deltaBar) {
					t.Fatalf("n = %d, dense: LinkEstimates differs from Estimates", n)
				}
				continue
			}
			if !slices.IsSorted(links) || len(lp) != len(links) || len(ld) != len(links) {
				t.Fatalf("n = %d: links %v (sorted %v), %d and %d values", n, links, slices.IsSorted(links), len(lp), len(ld))
			}
			k := 0
			for j := range n {
				var gp, gd float64
				if k < len(links) && links[k] == j {
					gp, gd = lp[k], ld[k]
					k++
				} else if pBar[j] != 0 || deltaBar[j] != 0 {
					t.Fatalf("n = %d: link %d (p̄ %v, δ̄ %v) is not listed", n, j, pBar[j], deltaBar[j])
				}
				if math.Float64bits(gp) != math.Float64bits(pBar[j]) || math.Float64bits(gd) != math.Float64bits(deltaBar[j]) {
					t.Fatalf("n = %d, j = %d: (%v, %v) per link, (%v, %v) per client", n, j, gp, gd, pBar[j], deltaBar[j])
				}
			}
		}
	}
}
