package models

import (
	"hgpsim/datasets"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomCoded returns n rows of d random codes over a table of random
// values (of both signs, some repeated, one -0), and the same data as a
// float64 Dataset built by a naive loop.
func randomCoded(r *rand.Rand, n, d, c int) (coded, plain *datasets.Dataset) {
	var lv datasets.Levels
	for k := range lv {
		lv[k] = r.NormFloat64()
	}
	lv[7], lv[8] = math.Copysign(0, -1), lv[9]
	coded = &datasets.Dataset{Codes: make([]uint8, n*d), Levels: &lv, Y: make([]int, n), N: n, D: d, C: c}
	plain = &datasets.Dataset{X: make([]float64, n*d), Y: coded.Y, N: n, D: d, C: c}
	for i := range coded.Codes {
		coded.Codes[i] = uint8(r.IntN(256))
		plain.X[i] = lv[coded.Codes[i]]
	}
	for i := range coded.Y {
		coded.Y[i] = r.IntN(c)
	}
	return coded, plain
}

// bitsEqual reports whether a and b hold the same float64 bit patterns.
func bitsEqual(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestCodedModelsMatchFloat runs every classifier on a coded Dataset and on
// its float64 twin, over all rows (idx nil, more than one chunk) and over a
// minibatch: losses, gradients and accuracies must agree to the bit.
func TestCodedModelsMatchFloat(t *testing.T) {
	r := testRand(t, 42)
	const D, C = 6, 3
	coded, plain := randomCoded(r, 2*batchChunk+5, D, C)
	models := map[string]Model[float64]{
		"softmax":  NewSoftmax[float64](D, C, 0.1),
		"mlp":      NewMLP[float64](D, 4, C, 0.1),
		"logistic": NewLogistic[float64](D, 0.1),
	}
	for name, m := range models {
		cd, pd := coded, plain
		if name == "logistic" {
			cd, pd = withClasses(coded, 2), withClasses(plain, 2)
		}
		x := make([]float64, m.Dim())
		m.Init(x, r)
		for _, idx := range [][]int{nil, {3, 130, 0, 3, 77}} {
			ga, gb := make([]float64, m.Dim()), make([]float64, m.Dim())
			la, lb := m.Grad(ga, x, cd, idx), m.Grad(gb, x, pd, idx)
			if math.Float64bits(la) != math.Float64bits(lb) || !bitsEqual(ga, gb) {
				t.Errorf("%s, idx %v: coded loss %v, float %v (gradients equal: %v)", name, idx, la, lb, bitsEqual(ga, gb))
			}
			if a, b := m.Accuracy(x, cd, idx), m.Accuracy(x, pd, idx); a != b {
				t.Errorf("%s, idx %v: accuracy %v vs %v", name, idx, a, b)
			}
		}
	}
	h := NewHyperRep[float64](D, 4, C, 0.1, false)
	x, lambda := make([]float64, h.DimX()), make([]float64, h.DimLambda())
	h.Init(x, r)
	h.InitLambda(lambda, r)
	u := randomVec(r, h.DimX(), 1)
	for _, idx := range [][]int{nil, {3, 130, 0, 3, 77}} {
		ha, hb := make([]float64, h.DimX()), make([]float64, h.DimX())
		h.InnerHVP(ha, x, lambda, coded, idx, u)
		h.InnerHVP(hb, x, lambda, plain, idx, u)
		ca, cb := make([]float64, h.DimLambda()), make([]float64, h.DimLambda())
		h.InnerCross(ca, x, lambda, coded, idx, u)
		h.InnerCross(cb, x, lambda, plain, idx, u)
		if !bitsEqual(ha, hb) || !bitsEqual(ca, cb) {
			t.Errorf("hyper-representation, idx %v: HVP equal %v, cross equal %v", idx, bitsEqual(ha, hb), bitsEqual(ca, cb))
		}
	}
	w := NewSampleWeighted[float64](NewSoftmax[float64](D, C, 0.1))
	x = make([]float64, w.Dim())
	w.Init(x, r)
	ga, gb := make([]float64, w.Dim()), make([]float64, w.Dim())
	for i := range coded.N {
		la, lb := w.SampleGrad(ga, x, coded, i), w.SampleGrad(gb, x, plain, i)
		pa, pb := w.Probability(x, coded, i), w.Probability(x, plain, i)
		if math.Float64bits(la) != math.Float64bits(lb) || !bitsEqual(ga, gb) || pa != pb {
			t.Fatalf("SampleWeighted row %d: coded and float differ", i)
		}
	}
}

// withClasses returns d with labels folded into [0, c).
func withClasses(d *datasets.Dataset, c int) *datasets.Dataset {
	out := *d
	out.Y = make([]int, d.N)
	for i, y := range d.Y {
		out.Y[i] = y % c
	}
	out.C = c
	return &out
}

// BenchmarkCodedGrad times a softmax gradient over Fashion-MNIST-sized rows
// held coded and as float64, on a minibatch and on every row (the
// evaluation path): the cost of decoding per batch.
func BenchmarkCodedGrad(b *testing.B) {
	const D, C, n, batch = 784, 10, 2048, 128
	r := testRand(b, 44)
	coded, plain := randomCoded(r, n, D, C)
	m := NewSoftmax[float64](D, C, 1e-3)
	x := randomVec(r, m.Dim(), 0.1)
	g := make([]float64, m.Dim())
	idx := make([]int, batch)
	for i := range idx {
		idx[i] = r.IntN(n)
	}
	for _, c := range []struct {
		name string
		idx  []int
	}{{"batch", idx}, {"all", nil}} {
		for _, d := range []struct {
			name string
			d    *datasets.Dataset
		}{{"float64", plain}, {"coded", coded}} {
			b.Run(c.name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					m.Grad(g, x, d.d, c.idx)
				}
			})
		}
	}
}
