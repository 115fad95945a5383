package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomCoded returns n rows of d random codes over a table of random
// values (of both signs, some repeated, one -0), and the same data as a
// float64 Dataset built by a naive loop.
func randomCoded(r *rand.Rand, n, d, c int) (coded, plain *Dataset) {
	var lv Levels
	for k := range lv {
		lv[k] = r.NormFloat64()
	}
	lv[7], lv[8] = math.Copysign(0, -1), lv[9]
	coded = &Dataset{Codes: make([]uint8, n*d), Levels: &lv, Y: make([]int, n), N: n, D: d, C: c}
	plain = &Dataset{X: make([]float64, n*d), Y: coded.Y, N: n, D: d, C: c}
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

func TestCodedReadsMatchFloat(t *testing.T) {
	r := testRand(t, 40)
	coded, plain := randomCoded(r, 9, 5, 3)
	if !coded.Coded() || plain.Coded() {
		t.Fatal("Coded() wrong")
	}
	if !bitsEqual(coded.Floats(), plain.X) {
		t.Fatal("Floats differs from the naive decode")
	}
	for i := range coded.N {
		if !bitsEqual(coded.Row(i), plain.Row(i)) {
			t.Fatalf("Row(%d) differs", i)
		}
	}
	idx := []int{8, 0, 3, 3, 7}
	a, b := make([]float64, len(idx)*5), make([]float64, len(idx)*5)
	coded.Gather(a, idx)
	plain.Gather(b, idx)
	if !bitsEqual(a, b) {
		t.Fatal("Gather differs")
	}
	a, b = a[:3*5], b[:3*5]
	coded.GatherRange(a, 4, 7)
	plain.GatherRange(b, 4, 7)
	if !bitsEqual(a, b) || !bitsEqual(b, plain.X[4*5:7*5]) {
		t.Fatal("GatherRange differs")
	}
	mustPanic(t, "GatherRange past N", "out of range", func() { coded.GatherRange(make([]float64, 10), 8, 10) })
	mustPanic(t, "Gather index", "out of range", func() { coded.Gather(make([]float64, 5), []int{9}) })
	mustPanic(t, "Codes and X", "non-nil X", func() {
		(&Dataset{X: []float64{}, Codes: []uint8{}, Levels: coded.Levels}).checkShape()
	})
	mustPanic(t, "Codes without Levels", "no Levels", func() { (&Dataset{Codes: []uint8{}}).checkShape() })
}

func TestPoolKeepsCodesOnlyUnderOneTable(t *testing.T) {
	r := testRand(t, 41)
	a, af := randomCoded(r, 4, 3, 2)
	b := &Dataset{Codes: slices.Clone(a.Codes[:6]), Levels: new(Levels), Y: []int{1, 0}, N: 2, D: 3, C: 2}
	*b.Levels = *a.Levels // equal values, another table
	bf := &Dataset{X: b.Floats(), Y: b.Y, N: 2, D: 3, C: 2}
	p := Pool(a, b)
	if !p.Coded() || p.Levels != a.Levels || !bitsEqual(p.Floats(), Pool(af, bf).X) {
		t.Fatalf("Pool of two parts under equal tables: coded %v", p.Coded())
	}
	p.Codes[0]++
	if a.Codes[0] == p.Codes[0] {
		t.Error("Pool aliases the codes of its parts")
	}
	c, cf := randomCoded(r, 3, 3, 2) // another table
	for _, parts := range [][]*Dataset{{a, c}, {a, cf}, {af, c}} {
		p := Pool(parts...)
		if p.Coded() || !bitsEqual(p.X, Pool(af, cf).X) {
			t.Fatalf("Pool of mixed parts: coded %v", p.Coded())
		}
	}
}

// TestCodedModelsMatchFloat runs every classifier on a coded Dataset and on
// its float64 twin, over all rows (idx nil, more than one chunk) and over a
// minibatch: losses, gradients and accuracies must agree to the bit.
func TestCodedModelsMatchFloat(t *testing.T) {
	r := testRand(t, 42)
	const D, C = 6, 3
	coded, plain := randomCoded(r, 2*batchChunk+5, D, C)
	models := map[string]Model{
		"softmax":  NewSoftmax(D, C, 0.1),
		"mlp":      NewMLP(D, 4, C, 0.1),
		"logistic": NewLogistic(D, 0.1),
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
	h := NewHyperRep(D, 4, C, 0.1, false)
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
	w := NewSampleWeighted(NewSoftmax(D, C, 0.1))
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
func withClasses(d *Dataset, c int) *Dataset {
	out := *d
	out.Y = make([]int, d.N)
	for i, y := range d.Y {
		out.Y[i] = y % c
	}
	out.C = c
	return &out
}

// TestCodedSourcesMatchFloat runs the data transformations (partition with
// cluster normalization, federated split after standardization, node-shift
// draws with rotation) on coded images and on their float64 twins.
func TestCodedSourcesMatchFloat(t *testing.T) {
	r := testRand(t, 43)
	train, trainF := randomCoded(r, 400, 784, 10)
	test, testF := randomCoded(r, 100, 784, 10)
	*test.Levels = *train.Levels // as two files of one data set
	testF.X = test.Floats()
	for i := range train.Y {
		train.Y[i] = i % 10 // every class in both sets
	}
	for i := range test.Y {
		test.Y[i] = i % 10
	}
	trainF.Y, testF.Y = train.Y, test.Y
	same := func(what string, a, b []ClientData, wantCoded bool) {
		t.Helper()
		for k := range a {
			for s, pair := range [][2]*Dataset{{a[k].Train, b[k].Train}, {a[k].Val, b[k].Val}, {a[k].Test, b[k].Test}} {
				x, y := pair[0], pair[1]
				if x.N > 0 && x.Coded() != wantCoded {
					t.Errorf("%s: node %d set %d coded %v, want %v", what, k, s, x.Coded(), wantCoded)
				}
				if !bitsEqual(x.Floats(), y.Floats()) || !slices.Equal(x.Y, y.Y) {
					t.Fatalf("%s: node %d set %d differs", what, k, s)
				}
			}
		}
	}
	spec := PartitionSpec{Clients: 6, Fraction: 0.5, Alpha: 0.7, Clusters: 2, TestFrac: 0.2, TrainFrac: 0.75}
	a, err := Partition(spec, train, test, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Partition(spec, trainF, testF, 5)
	if err != nil {
		t.Fatal(err)
	}
	same("Partition", a, b, true)

	// standardize transforms in place: work on copies.
	tc, ec := Pool(train), Pool(test)
	tf, ef := Pool(trainF), Pool(testF)
	standardize(tc, ec)
	standardize(tf, ef)
	if !bitsEqual(tc.Floats(), tf.X) || !bitsEqual(ec.Floats(), ef.X) {
		t.Fatal("standardize: coded and float differ")
	}
	a, err = FederatedSplit(tc, ec, 4, true, 2, 50, 0.2, 0.5, testRand(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	b, err = FederatedSplit(tf, ef, 4, true, 2, 50, 0.2, 0.5, testRand(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	same("FederatedSplit", a, b, true)

	ns := NodeShiftSpec{Nodes: 4, Setting: 4, Majority: true, Minority: 1, Train: 30, Val: 20, Test: 20}
	a, err = NodeShift(ns, train, test, 9)
	if err != nil {
		t.Fatal(err)
	}
	b, err = NodeShift(ns, trainF, testF, 9)
	if err != nil {
		t.Fatal(err)
	}
	same("NodeShift", a, b, true)
}

// BenchmarkCodedGrad times a softmax gradient over Fashion-MNIST-sized rows
// held coded and as float64, on a minibatch and on every row (the
// evaluation path): the cost of decoding per batch.
func BenchmarkCodedGrad(b *testing.B) {
	const D, C, n, batch = 784, 10, 2048, 128
	r := testRand(b, 44)
	coded, plain := randomCoded(r, n, D, C)
	m := NewSoftmax(D, C, 1e-3)
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
			d    *Dataset
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
