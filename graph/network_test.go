package graph

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// stochastic returns the networks whose edges are random, built for tests.
func stochastic(t testing.TB) map[string]*Network {
	t.Helper()
	specs := map[string]testSpec{
		"stochastic-directed":   {Kind: "stochastic-directed", N: 7, DeltaMin: 0.4, DeltaMax: 0.8},
		"stochastic-undirected": {Kind: "stochastic-undirected", N: 7, DeltaMin: 0.2, DeltaMax: 0.9},
		"ring":                  {Kind: "ring", N: 6, Prob: 0.5},
		"star":                  {Kind: "star", N: 5, Prob: 0.3},
		"edge-list-mixed": {Kind: "edge-list", N: 4, Edges: []Edge{
			{0, 1, 1}, {1, 0, 0.3}, {1, 2, 0.6}, {2, 1, 0.9}, {2, 3, 1}, {3, 2, 0.45}, {0, 3, 0.7}, {3, 0, 0.2},
		}},
	}
	out := make(map[string]*Network)
	for name, s := range specs {
		nw, err := buildSpec(s, 42)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = nw
	}
	return out
}

func TestRealizeDeterministicAndOrdered(t *testing.T) {
	for name, nw := range stochastic(t) {
		// First pass in natural order, second in reverse order of ticks and
		// senders, and a third on a copy without the out-neighbour cache:
		// all must agree.
		const ticks = 200
		first := make([][][]int, nw.N)
		for i := range nw.N {
			first[i] = make([][]int, ticks)
			for tk := range ticks {
				r := nw.Realize(i, uint64(tk), nil)
				if !slices.IsSorted(r) {
					t.Fatalf("%s: Realize(%d, %d) = %v not ascending", name, i, tk, r)
				}
				if !slices.Contains(r, i) {
					t.Fatalf("%s: Realize(%d, %d) = %v misses the sender", name, i, tk, r)
				}
				if len(slices.Compact(slices.Clone(r))) != len(r) {
					t.Fatalf("%s: Realize(%d, %d) = %v has duplicates", name, i, tk, r)
				}
				for _, j := range r {
					if nw.Delta(i, j) == 0 {
						t.Fatalf("%s: Realize(%d, %d) = %v includes non-link %d", name, i, tk, r, j)
					}
				}
				first[i][tk] = r
			}
		}
		bare := toDense(nw)
		bare.Process = nil
		buf := make([]int, 0, nw.N)
		for tk := ticks - 1; tk >= 0; tk-- {
			for i := nw.N - 1; i >= 0; i-- {
				if got := nw.Realize(i, uint64(tk), buf); !slices.Equal(got, first[i][tk]) {
					t.Fatalf("%s: Realize(%d, %d) = %v, earlier %v", name, i, tk, got, first[i][tk])
				}
				if got := bare.Realize(i, uint64(tk), buf); !slices.Equal(got, first[i][tk]) {
					t.Fatalf("%s: uncached Realize(%d, %d) = %v, cached %v", name, i, tk, got, first[i][tk])
				}
			}
		}
		// A different seed must change some realization, or the seed is unused.
		other := *nw
		other.Seed++
		same := true
		for i := range nw.N {
			for tk := range ticks {
				if !slices.Equal(other.Realize(i, uint64(tk), buf), first[i][tk]) {
					same = false
				}
			}
		}
		if same {
			t.Errorf("%s: changing Seed changed no realization", name)
		}
	}
}

func TestRealizeSymmetric(t *testing.T) {
	for name, nw := range stochastic(t) {
		if !nw.Symmetric {
			continue
		}
		var ri, rj []int
		for tk := range uint64(2000) {
			for i := range nw.N {
				ri = nw.Realize(i, tk, ri)
				for j := i + 1; j < nw.N; j++ {
					rj = nw.Realize(j, tk, rj)
					if slices.Contains(ri, j) != slices.Contains(rj, i) {
						t.Fatalf("%s: tick %d: δ_%d→%d = %v but δ_%d→%d = %v",
							name, tk, i, j, slices.Contains(ri, j), j, i, slices.Contains(rj, i))
					}
				}
			}
		}
	}
}

func TestRealizeFrequency(t *testing.T) {
	const ticks = 20000
	for name, nw := range stochastic(t) {
		count := make([][]int, nw.N)
		buf := make([]int, 0, nw.N)
		for i := range nw.N {
			count[i] = make([]int, nw.N)
			for tk := range uint64(ticks) {
				for _, j := range nw.Realize(i, tk, buf) {
					count[i][j]++
				}
			}
		}
		for i := range nw.N {
			for j := range nw.N {
				p := nw.Delta(i, j)
				freq := float64(count[i][j]) / ticks
				se := math.Sqrt(p * (1 - p) / ticks)
				if math.Abs(freq-p) > 4*se {
					t.Errorf("%s: link %d→%d up %.4f of %d ticks, δ̄=%.4f (4 s.e. = %.4f)", name, i, j, freq, ticks, p, 4*se)
				}
			}
		}
	}
}

func TestRealizeAllocs(t *testing.T) {
	nw, err := buildSpec(testSpec{Kind: "stochastic-directed", N: 50, DeltaMin: 0.4, DeltaMax: 0.8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	recv := make([]int, 0, nw.N)
	w := make([]float64, 0, nw.N)
	tick := uint64(0)
	allocs := testing.AllocsPerRun(100, func() {
		tick++
		recv = nw.Realize(int(tick%50), tick, recv)
		w = nw.PushWeights(int(tick%50), recv, w)
	})
	if allocs != 0 {
		t.Errorf("Realize+PushWeights allocate %v times per call, want 0", allocs)
	}
}

// staticNetworks returns the networks with fixed Mixing.
func staticNetworks(t *testing.T) map[string]*Network {
	t.Helper()
	out := make(map[string]*Network)
	for name, s := range map[string]testSpec{
		"fully-connected":       {Kind: "fully-connected", N: 5},
		"static-undirected":     {Kind: "static-undirected", N: 12, EdgeProb: 0.4},
		"static-undirected-mh":  {Kind: "static-undirected", N: 12, EdgeProb: 0.4, Weights: "metropolis"},
		"ring-deterministic":    {Kind: "ring", N: 5, Prob: 1},
		"edge-list-symmetric-1": {Kind: "edge-list", N: 3, Symmetric: true, Edges: []Edge{{0, 1, 1}, {2, 1, 1}}},
	} {
		nw, err := buildSpec(s, 7)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = nw
	}
	return out
}

func TestPushWeightsColumnStochastic(t *testing.T) {
	nets := stochastic(t)
	for name, nw := range staticNetworks(t) {
		nets[name] = nw
	}
	for name, nw := range nets {
		var recv []int
		var w []float64
		for tk := range uint64(300) {
			for i := range nw.N {
				recv = nw.Realize(i, tk, recv)
				w = nw.PushWeights(i, recv, w)
				if len(w) != len(recv) {
					t.Fatalf("%s: %d weights for %d receivers", name, len(w), len(recv))
				}
				sum := 0.0
				for _, x := range w {
					if x < 0 {
						t.Fatalf("%s: negative weight %v", name, w)
					}
					sum += x
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("%s: sender %d tick %d: weights %v to %v sum to %v", name, i, tk, w, recv, sum)
				}
			}
		}
	}
}

func TestPushWeightsRule(t *testing.T) {
	nets := staticNetworks(t)
	fc := nets["fully-connected"]
	recv := fc.Realize(2, 9, nil)
	for _, x := range fc.PushWeights(2, recv, nil) {
		if x != 1.0/5 {
			t.Fatalf("fully-connected weight %v, want 1/5", x)
		}
	}
	su := nets["static-undirected"]
	recv = su.Realize(3, 9, nil)
	w := su.PushWeights(3, recv, nil)
	for k, j := range recv {
		if w[k] != su.Mixing[3][j] {
			t.Fatalf("static weight 3→%d = %v, Mixing has %v", j, w[k], su.Mixing[3][j])
		}
	}
	sd := stochastic(t)["stochastic-directed"]
	recv = sd.Realize(1, 5, nil)
	for _, x := range sd.PushWeights(1, recv, make([]float64, 0, 1)) {
		if x != 1/float64(len(recv)) {
			t.Fatalf("uniform weight %v, want 1/%d", x, len(recv))
		}
	}
}

func TestExpectedPushWeightsMonteCarlo(t *testing.T) {
	const ticks = 20000
	nets := stochastic(t)
	for name, nw := range staticNetworks(t) {
		nets[name] = nw
	}
	for name, nw := range nets {
		pBar := nw.ExpectedPushWeights()
		sum := make([][]float64, nw.N)
		sq := make([][]float64, nw.N)
		var recv []int
		var w []float64
		for i := range nw.N {
			sum[i] = make([]float64, nw.N)
			sq[i] = make([]float64, nw.N)
			for tk := range uint64(ticks) {
				recv = nw.Realize(i, tk, recv)
				w = nw.PushWeights(i, recv, w)
				for k, j := range recv {
					sum[i][j] += w[k]
					sq[i][j] += w[k] * w[k]
				}
			}
		}
		for i := range nw.N {
			row := 0.0
			for j := range nw.N {
				row += pBar[i][j]
				mean := sum[i][j] / ticks
				se := math.Sqrt(math.Max(0, sq[i][j]/ticks-mean*mean) / ticks)
				if math.Abs(mean-pBar[i][j]) > 4*se+1e-12 {
					t.Errorf("%s: p̄[%d][%d] = %.5f, Monte Carlo %.5f ± %.5f", name, i, j, pBar[i][j], mean, se)
				}
				if nw.Delta(i, j) == 0 && pBar[i][j] != 0 {
					t.Errorf("%s: p̄[%d][%d] = %v without a link", name, i, j, pBar[i][j])
				}
			}
			if math.Abs(row-1) > 1e-12 {
				t.Errorf("%s: row %d of p̄ sums to %v", name, i, row)
			}
		}
	}
}

// TestExpectedPushWeightsExact compares the deconvolution against a direct
// enumeration of all 2^d realizations of one sender's links.
func TestExpectedPushWeightsExact(t *testing.T) {
	// Probabilities on both sides of 1/2, plus a sure link, to exercise
	// both recursion directions and the sure-link shortcut.
	row := []float64{1, 0.05, 0.95, 0.5, 1, 0.3, 0.7, 0, 0.999, 0.001}
	n := len(row)
	nw := &Network{N: n, Prob: identity(n)}
	nw.Prob[0] = row
	got := nw.ExpectedPushWeights()[0]
	want := make([]float64, n)
	for mask := 0; mask < 1<<n; mask++ {
		pr, up := 1.0, 0
		for j := range n {
			on := mask>>j&1 == 1
			switch {
			case j == 0 && !on:
				pr = 0
			case on:
				pr *= row[j]
				up++
			default:
				pr *= 1 - row[j]
			}
		}
		if pr == 0 {
			continue
		}
		for j := range n {
			if mask>>j&1 == 1 {
				want[j] += pr / float64(up)
			}
		}
	}
	for j := range n {
		if math.Abs(got[j]-want[j]) > 1e-13 {
			t.Errorf("p̄[0][%d] = %.16f, enumeration %.16f", j, got[j], want[j])
		}
	}
}

func BenchmarkRealize(b *testing.B) {
	for _, n := range []int{100, 1000} {
		nw, err := buildSpec(testSpec{Kind: "stochastic-directed", N: n, DeltaMin: 0.4, DeltaMax: 0.8}, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			dst := make([]int, 0, n)
			b.ReportAllocs()
			for k := 0; b.Loop(); k++ {
				dst = nw.Realize(k%n, uint64(k), dst)
			}
		})
	}
}
