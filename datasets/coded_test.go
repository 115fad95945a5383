package datasets

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
		(&Dataset{X: []float64{}, Codes: []uint8{}, Levels: coded.Levels}).CheckShape()
	})
	mustPanic(t, "Codes without Levels", "no Levels", func() { (&Dataset{Codes: []uint8{}}).CheckShape() })
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
