package optim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLinkSumsMatchDense adds random values to random neighbours, one at a
// time and in ascending batches, and compares every sum bit for bit with a
// dense vector updated by the same additions; save and load round-trip.
func TestLinkSumsMatchDense(t *testing.T) {
	for _, n := range []int{50, DenseCounts + 50} {
		testLinkSums(t, n)
	}
}

func testLinkSums(t *testing.T, n int) {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	s := newLinkSums(n)
	if (s.all == nil) != (n > DenseCounts) {
		t.Fatalf("n = %d: dense storage %v", n, s.all != nil)
	}
	dense := make([]float64, n)
	for range 200 {
		if r.IntN(2) == 0 {
			j, v := r.IntN(n), r.Float64()
			s.add(j, v)
			dense[j] += v
			continue
		}
		var js []int
		for j := range n {
			if r.IntN(max(8, n/6)) == 0 {
				js = append(js, j)
			}
		}
		vs := make([]float64, len(js))
		for k, j := range js {
			vs[k] = r.Float64()
			dense[j] += vs[k]
		}
		s.addAll(js, vs)
	}
	got := s.dense(n)
	for j := range n {
		if math.Float64bits(got[j]) != math.Float64bits(dense[j]) {
			t.Fatalf("sum of %d = %v, dense %v", j, got[j], dense[j])
		}
	}
	if !slices.IsSorted(s.keys) {
		t.Fatalf("keys not ascending: %v", s.keys)
	}
	back := newLinkSums(n)
	back.load(got)
	if !slices.Equal(back.dense(n), got) {
		t.Fatal("load(dense()) changed the sums")
	}
	est := make([]float64, n)
	s.scatter(est, 3)
	for j := range n {
		if est[j] != dense[j]/3 {
			t.Fatalf("scatter: %v at %d, want %v", est[j], j, dense[j]/3)
		}
	}
}
