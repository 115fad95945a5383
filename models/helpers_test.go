package models

import (
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
)

// testRand returns a deterministic generator, one per salt.
func testRand(t testing.TB, salt uint64) *rand.Rand {
	t.Helper()
	return rng.New(12345+salt, rng.Global, rng.PurposeData)
}

// randomData returns n rows of N(0, 1) features with uniform labels in [0, c).
func randomData(r *rand.Rand, n, d, c int) *datasets.Dataset {
	ds := &datasets.Dataset{X: make([]float64, n*d), Y: make([]int, n), N: n, D: d, C: c}
	for i := range ds.X {
		ds.X[i] = r.NormFloat64()
	}
	for i := range ds.Y {
		ds.Y[i] = r.IntN(c)
	}
	return ds
}

// randomVec returns n draws of N(0, scale²).
func randomVec(r *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * r.NormFloat64()
	}
	return v
}

// relErr returns ‖a − b‖ / max(‖a‖, ‖b‖), 0 when both are 0.
func relErr(a, b []float64) float64 {
	if len(a) != len(b) {
		panic("relErr: length mismatch")
	}
	var diff, na, nb float64
	for i := range a {
		diff += (a[i] - b[i]) * (a[i] - b[i])
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	den := math.Sqrt(math.Max(na, nb))
	if den == 0 {
		return 0
	}
	return math.Sqrt(diff) / den
}

// fdGrad returns the central finite-difference gradient of m.Loss at x.
func fdGrad(m Model[float64], x []float64, d *datasets.Dataset, idx []int) []float64 {
	const h = 1e-5
	g := make([]float64, len(x))
	xp := append([]float64(nil), x...)
	for i := range x {
		xp[i] = x[i] + h
		fp := m.Loss(xp, d, idx)
		xp[i] = x[i] - h
		fm := m.Loss(xp, d, idx)
		xp[i] = x[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

// modelCase is one model under test with a dataset that fits it.
type modelCase struct {
	name  string
	model Model[float64]
	ds    func(r *rand.Rand, n int) *datasets.Dataset
}

// modelCases returns every model of the package, small enough for
// coordinate-wise finite differences.
func modelCases() []modelCase {
	return []modelCase{
		{
			name:  "Softmax",
			model: NewSoftmax[float64](7, 4, 0.1),
			ds:    func(r *rand.Rand, n int) *datasets.Dataset { return randomData(r, n, 7, 4) },
		},
		{
			name:  "Logistic",
			model: NewLogistic[float64](6, 0.1),
			ds:    func(r *rand.Rand, n int) *datasets.Dataset { return randomData(r, n, 6, 2) },
		},
		{
			name:  "MLP",
			model: NewMLP[float64](7, 5, 4, 0.01),
			ds:    func(r *rand.Rand, n int) *datasets.Dataset { return randomData(r, n, 7, 4) },
		},
	}
}
