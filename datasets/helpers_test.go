package datasets

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"hgpsim/internal/rng"
)

// testRand returns a deterministic generator, one per salt.
func testRand(t testing.TB, salt uint64) *rand.Rand {
	t.Helper()
	return rng.New(12345+salt, rng.Global, rng.PurposeData)
}

// randomData returns n rows of N(0, 1) features with uniform labels in [0, c).
func randomData(r *rand.Rand, n, d, c int) *Dataset {
	ds := &Dataset{X: make([]float64, n*d), Y: make([]int, n), N: n, D: d, C: c}
	for i := range ds.X {
		ds.X[i] = r.NormFloat64()
	}
	for i := range ds.Y {
		ds.Y[i] = r.IntN(c)
	}
	return ds
}

// norm2 returns ‖a‖².
func norm2(a []float64) float64 {
	var s float64
	for _, v := range a {
		s += v * v
	}
	return s
}

// relDiff returns ‖a − b‖ / max(‖a‖, ‖b‖), 0 when both are 0.
func relDiff(a, b []float64) float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	den := math.Sqrt(max(norm2(a), norm2(b)))
	if den == 0 {
		return 0
	}
	return math.Sqrt(norm2(d)) / den
}

// mustPanic fails t unless f panics with a message containing want.
func mustPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		v := recover()
		if v == nil {
			t.Errorf("%s: no panic", name)
			return
		}
		if s, ok := v.(string); !ok || !strings.Contains(s, want) {
			t.Errorf("%s: panic %q, want it to mention %q", name, v, want)
		}
	}()
	f()
}
