package optim

import (
	"math"
	"testing"
)

// A float32 client's x in Stats.X32 counts, and weighs in the consensus
// distance, exactly as its float64 widening in Stats.X would.
func TestConsensusReadsX32AsWidened(t *testing.T) {
	x32 := [][]float32{{1, 2.5, -3}, {0.1, 2, -2.75}, {1e-3, 1e3, 7}}
	wide, narrow := make([]Stats, len(x32)), make([]Stats, len(x32))
	for i, x := range x32 {
		narrow[i].X32 = x
		wide[i].X = make([]float64, len(x))
		for k, v := range x {
			wide[i].X[k] = float64(v)
		}
	}
	w, n := ConsensusOf(wide), ConsensusOf(narrow)
	if n.Clients != 3 || math.Float64bits(n.Value) != math.Float64bits(w.Value) || !(w.Value > 0) {
		t.Fatalf("consensus of X32 = %+v, of X widened = %+v", n, w)
	}
	if a := Summarize(narrow); a.XClients != 3 || math.Float64bits(a.Consensus) != math.Float64bits(w.Value) {
		t.Fatalf("Summarize of X32: %d clients, consensus %v; want 3, %v", a.XClients, a.Consensus, w.Value)
	}
}
