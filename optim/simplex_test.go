package optim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The projection is feasible (Σ = 1, 0 ≤ w ≤ b) and optimal: no feasible
// point of a fine grid (K = 3) is closer to v, and the KKT conditions hold
// for random K.
func TestProjectCappedSimplex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		k := 2 + r.IntN(15)
		b := 1/float64(k) + r.Float64()*(1-1/float64(k))
		if trial%7 == 0 {
			b = 1 / float64(k) // the cap that forces w = 1/K
		}
		v := make([]float64, k)
		for i := range v {
			v[i] = 3 * r.NormFloat64()
		}
		w := make([]float64, k)
		if err := ProjectCappedSimplex(w, v, b); err != nil {
			t.Fatal(err)
		}
		var s float64
		for _, x := range w {
			if x < 0 || x > b+1e-15 {
				t.Fatalf("w = %v outside [0, %v]", w, b)
			}
			s += x
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("Σw = %v", s)
		}
		// KKT: w_k = clip(v_k − t, 0, b) for one t: the free coordinates
		// share v_k − w_k; coordinates at 0 have v_k − t ≤ 0, at b ≥ b.
		thr := math.NaN()
		for i := range w {
			if w[i] > 1e-12 && w[i] < b-1e-12 {
				if math.IsNaN(thr) {
					thr = v[i] - w[i]
				} else if math.Abs(thr-(v[i]-w[i])) > 1e-9 {
					t.Fatalf("free coordinates disagree on the threshold: %v vs %v", thr, v[i]-w[i])
				}
			}
		}
		if !math.IsNaN(thr) {
			for i := range w {
				if w[i] <= 1e-12 && v[i]-thr > 1e-9 || w[i] >= b-1e-12 && v[i]-thr < b-1e-9 {
					t.Fatalf("KKT fails at %d: v = %v, w = %v, t = %v", i, v[i], w[i], thr)
				}
			}
		}
	}
	// Brute force on K = 3: the grid of feasible points.
	for range 50 {
		v := []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		b := 0.4 + 0.6*r.Float64()
		w := make([]float64, 3)
		if err := ProjectCappedSimplex(w, v, b); err != nil {
			t.Fatal(err)
		}
		dist := func(a []float64) float64 {
			var s float64
			for i := range a {
				s += (a[i] - v[i]) * (a[i] - v[i])
			}
			return s
		}
		best := dist(w)
		const n = 400
		for i := 0; i <= n; i++ {
			for j := 0; i+j <= n; j++ {
				p := []float64{float64(i) / n, float64(j) / n, float64(n-i-j) / n}
				if p[0] <= b && p[1] <= b && p[2] <= b && dist(p) < best-1e-12 {
					t.Fatalf("v = %v, b = %v: grid point %v is closer than %v", v, b, p, w)
				}
			}
		}
	}
}

func TestProjectCappedSimplexErrors(t *testing.T) {
	w := make([]float64, 3)
	for _, c := range []struct {
		v    []float64
		b    float64
		want string
	}{
		{[]float64{1, 2, 3}, 0.3, "empty"},
		{[]float64{1, math.NaN(), 3}, 0.5, "coordinate 1"},
		{[]float64{1, 2, 3}, math.Inf(1), "cap"},
		{[]float64{1, 2, 3}, 0, "cap"},
	} {
		err := ProjectCappedSimplex(w, c.v, c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("v = %v, b = %v: got %v, want an error containing %q", c.v, c.b, err, c.want)
		}
	}
	if err := ProjectCappedSimplex(w, []float64{5, 5, 5}, 1.0/3); err != nil || math.Abs(w[0]-1.0/3) > 1e-12 {
		t.Errorf("K·b = 1: %v, %v", w, err)
	}
}
