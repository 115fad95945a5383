package graph

import (
	"math"
	"testing"
)

// checkDoublyStochastic fails unless m is symmetric, nonnegative, zero off
// the links of nw, and has rows summing to 1.
func checkDoublyStochastic(t *testing.T, name string, nw *Network, m [][]float64) {
	t.Helper()
	for i := range nw.N {
		sum := 0.0
		for j := range nw.N {
			w := m[i][j]
			if w != m[j][i] {
				t.Errorf("%s: W[%d][%d] = %v but W[%d][%d] = %v", name, i, j, w, j, i, m[j][i])
			}
			if w < 0 {
				t.Errorf("%s: W[%d][%d] = %v < 0", name, i, j, w)
			}
			if nw.Delta(i, j) == 0 && w != 0 {
				t.Errorf("%s: W[%d][%d] = %v off the graph", name, i, j, w)
			}
			sum += w
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: row %d sums to %v", name, i, sum)
		}
	}
}

func TestStaticMixing(t *testing.T) {
	const n = 20
	var fmmcSum, mhSum float64
	seeds := []uint64{1, 2, 3}
	for _, seed := range seeds {
		f, err := buildSpec(testSpec{Kind: "static-undirected", N: n, EdgeProb: 0.4, Weights: "fmmc"}, seed)
		if err != nil {
			t.Fatal(err)
		}
		m, err := buildSpec(testSpec{Kind: "static-undirected", N: n, EdgeProb: 0.4, Weights: "metropolis"}, seed)
		if err != nil {
			t.Fatal(err)
		}
		// The graph comes from the seed alone, not from the weight rule.
		for i := range n {
			for j := range n {
				if f.Delta(i, j) != m.Delta(i, j) {
					t.Fatalf("seed %d: graphs differ at %d,%d", seed, i, j)
				}
			}
		}
		checkDoublyStochastic(t, "fmmc", f, f.Mixing)
		checkDoublyStochastic(t, "metropolis", m, m.Mixing)
		// Metropolis–Hastings has the closed form on every edge.
		deg := make([]int, n)
		for i := range n {
			for j := range n {
				if i != j && m.Delta(i, j) > 0 {
					deg[i]++
				}
			}
		}
		for i := range n {
			for j := range n {
				if i != j && m.Delta(i, j) > 0 {
					if want := 1 / float64(1+max(deg[i], deg[j])); m.Mixing[i][j] != want {
						t.Errorf("metropolis W[%d][%d] = %v, want %v", i, j, m.Mixing[i][j], want)
					}
				}
			}
		}
		sf, sm := slemOf(f.Mixing), slemOf(m.Mixing)
		t.Logf("n=%d p=0.4 seed=%d: SLEM fmmc %.4f, metropolis %.4f", n, seed, sf, sm)
		if !(sf < sm-1e-3) {
			t.Errorf("seed %d: FMMC SLEM %.6f not below Metropolis SLEM %.6f", seed, sf, sm)
		}
		if !(sf > 0 && sm < 1) {
			t.Errorf("seed %d: SLEMs %v %v out of (0, 1) on a connected graph", seed, sf, sm)
		}
		fmmcSum += sf
		mhSum += sm
	}
	t.Logf("mean SLEM over %d graphs: fmmc %.4f, metropolis %.4f", len(seeds), fmmcSum/3, mhSum/3)
}

// TestFMMCKnownOptimum checks the optimizer where the answer is known. On
// the path with n nodes the fastest-mixing chain puts 1/2 on every edge and
// has SLEM cos(π/n) (Boyd, Diaconis & Xiao 2004), i.e. 1/2 for n = 3, where
// Metropolis–Hastings (1/3 per edge) only reaches 2/3.
func TestFMMCKnownOptimum(t *testing.T) {
	edges := [][2]int{{0, 1}, {1, 2}}
	w := fastestMixing(3, edges)
	if got := slemOf(w); math.Abs(got-0.5) > 1e-3 {
		t.Errorf("FMMC SLEM on the 3-path = %v, want 0.5 (weights %v)", got, w)
	}
	if mh := slemOf(metropolis(3, edges)); !(mh > 0.5+1e-3) {
		t.Errorf("Metropolis SLEM on the 3-path = %v, expected worse than the optimum 0.5", mh)
	}
	// The complete graph is optimal at W = 11ᵀ/n with SLEM 0, which is the
	// Metropolis start itself; the optimizer must keep it.
	var kEdges [][2]int
	for i := range 5 {
		for j := i + 1; j < 5; j++ {
			kEdges = append(kEdges, [2]int{i, j})
		}
	}
	if got := slemOf(fastestMixing(5, kEdges)); got > 1e-12 {
		t.Errorf("FMMC SLEM on K5 = %v, want 0", got)
	}
}
