package datasets

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// sameData reports whether a and b hold identical datasets.
func sameData(a, b []ClientData) bool {
	eq := func(x, y *Dataset) bool {
		return x.N == y.N && x.D == y.D && x.C == y.C && slices.Equal(x.X, y.X) && slices.Equal(x.Y, y.Y)
	}
	return slices.EqualFunc(a, b, func(x, y ClientData) bool {
		return eq(x.Train, y.Train) && eq(x.Val, y.Val) && eq(x.Test, y.Test)
	})
}

func paperSpec() PartitionSpec {
	return PartitionSpec{Clients: 100, Fraction: 0.1, Alpha: 0.4, Clusters: 3, TestFrac: 0.2, TrainFrac: 0.75}
}

// pooledTrace builds train (rows 0…5999) and test (rows 6000…6999) sets
// whose first feature traces the pooled row.
func pooledTrace(t *testing.T) (train, test *Dataset) {
	return tracedData(testRand(t, 20), 6000, 3, 10, 0, cyclic(10)),
		tracedData(testRand(t, 21), 1000, 3, 10, 6000, cyclic(10))
}

func TestPartition(t *testing.T) {
	train, test := pooledTrace(t)
	pool := Pool(train, test)
	spec := paperSpec()
	spec.Clients = 20
	spec.Clusters = 0
	data, err := Partition(spec, train, test, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 20 {
		t.Fatalf("%d clients", len(data))
	}
	var all []int
	fromTest := 0
	for i, cd := range data {
		for _, part := range []*Dataset{cd.Train, cd.Val, cd.Test} {
			if part.N == 0 {
				t.Errorf("client %d has an empty split", i)
			}
			checkRowsOf(t, part, pool)
			for _, o := range origin(part) {
				if o >= 6000 {
					fromTest++
				}
			}
			all = append(all, origin(part)...)
		}
		// Sizes follow SplitClient's rounding of 20% test, then 3:1.
		m := cd.Train.N + cd.Val.N + cd.Test.N
		nTest := min(max(int(math.Round(0.2*float64(m))), 1), m-2)
		if cd.Test.N != nTest {
			t.Errorf("client %d: %d test rows of %d, want %d", i, cd.Test.N, m, nTest)
		}
	}
	// 10% of 700 per label, each row once, drawn from both sets.
	if len(all) != 700 {
		t.Errorf("%d rows in total, want 700", len(all))
	}
	slices.Sort(all)
	if len(slices.Compact(all)) != len(all) {
		t.Errorf("a row went to two clients or splits")
	}
	if fromTest == 0 || fromTest == len(all) {
		t.Errorf("%d of %d rows from the test set: the sets were not pooled", fromTest, len(all))
	}

	// The test set is optional.
	if data, err := Partition(spec, train, nil, 7); err != nil || len(data) != 20 {
		t.Errorf("nil test set: %v", err)
	}
}

func TestPartitionDeterministic(t *testing.T) {
	train, test := pooledTrace(t)
	spec := paperSpec()
	spec.Clients = 30
	a, err := Partition(spec, train, test, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Partition(spec, train, test, 5)
	c, _ := Partition(spec, train, test, 6)
	if digest(a) != digest(b) {
		t.Errorf("same spec and seed gave different data")
	}
	if digest(a) == digest(c) {
		t.Errorf("seeds 5 and 6 gave identical data")
	}
}

func TestPartitionClusters(t *testing.T) {
	// The normalization parameters are drawn after everything else, so with
	// and without clusters the same rows go to the same places, and each
	// cluster's features are one affine map of the raw ones.
	train, test := pooledTrace(t)
	spec := paperSpec()
	spec.Clients = 10
	spec.Clusters = 0
	raw, err := Partition(spec, train, test, 3)
	if err != nil {
		t.Fatal(err)
	}
	spec.Clusters = 3
	norm, err := Partition(spec, train, test, 3)
	if err != nil {
		t.Fatal(err)
	}
	maps := make([]*Normalization, 3)
	for i := range raw {
		k := clusterOf(i, 10, 3)
		for s, rp := range []*Dataset{raw[i].Train, raw[i].Val, raw[i].Test} {
			np := []*Dataset{norm[i].Train, norm[i].Val, norm[i].Test}[s]
			if !slices.Equal(rp.Y, np.Y) || rp.N != np.N {
				t.Fatalf("client %d: clusters changed the rows", i)
			}
			if maps[k] == nil {
				// Recover (Mean, Std) from the trace column of two rows.
				x0, x1 := rp.X[0], rp.X[rp.D]
				y0, y1 := np.X[0], np.X[np.D]
				std := (x1 - x0) / (y1 - y0)
				maps[k] = &Normalization{Mean: x0 - y0*std, Std: std}
			}
			nm := maps[k]
			for j, v := range np.X {
				if math.Abs(v*nm.Std+nm.Mean-rp.X[j]) > 1e-9*max(1, math.Abs(rp.X[j])) {
					t.Fatalf("client %d (cluster %d): feature %d is not (x − %v)/%v", i, k, j, nm.Mean, nm.Std)
				}
			}
		}
	}
	for a := range maps {
		t.Logf("cluster %d: %+v", a, *maps[a])
		for b := range a {
			if math.Abs(maps[a].Mean-maps[b].Mean) < 1e-6 && math.Abs(maps[a].Std-maps[b].Std) < 1e-6 {
				t.Errorf("clusters %d and %d share %+v", a, b, *maps[a])
			}
		}
	}
}

func TestPartitionErrors(t *testing.T) {
	train, test := pooledTrace(t)
	for _, tc := range []struct {
		field string
		edit  func(*PartitionSpec)
	}{
		{"Clients", func(s *PartitionSpec) { s.Clients = 0 }},
		{"Fraction", func(s *PartitionSpec) { s.Fraction = 0 }},
		{"Fraction", func(s *PartitionSpec) { s.Fraction = 1.01 }},
		{"Fraction", func(s *PartitionSpec) { s.Fraction = math.NaN() }},
		{"Alpha", func(s *PartitionSpec) { s.Alpha = 0 }},
		{"Alpha", func(s *PartitionSpec) { s.Alpha = math.Inf(1) }},
		{"Clusters", func(s *PartitionSpec) { s.Clusters = -1 }},
		{"Clusters", func(s *PartitionSpec) { s.Clusters = 101 }},
		{"TestFrac", func(s *PartitionSpec) { s.TestFrac = 0 }},
		{"TestFrac", func(s *PartitionSpec) { s.TestFrac = 1 }},
		{"TrainFrac", func(s *PartitionSpec) { s.TrainFrac = 1 }},
		{"TrainFrac", func(s *PartitionSpec) { s.TrainFrac = -0.5 }},
		// 1% of 7000 is 70 rows, fewer than 3 for each of 100 clients.
		{"Fraction = 0.01", func(s *PartitionSpec) { s.Fraction = 0.01 }},
	} {
		spec := paperSpec()
		tc.edit(&spec)
		data, err := Partition(spec, train, test, 1)
		if err == nil || data != nil {
			t.Errorf("%s: spec %+v accepted", tc.field, spec)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %q does not name it", tc.field, err)
		}
	}
	_, err := Partition(PartitionSpec{}, train, test, 1)
	for _, f := range []string{"Clients", "Fraction", "Alpha", "TestFrac", "TrainFrac"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("zero spec: error %v does not name %s", err, f)
		}
	}
	wide := tracedData(testRand(t, 22), 10, 4, 10, 0, cyclic(10))
	if _, err := Partition(paperSpec(), train, wide, 1); err == nil || !strings.Contains(err.Error(), "D = 4") {
		t.Errorf("mismatched D: error %v", err)
	}
	if _, err := Partition(paperSpec(), nil, test, 1); err == nil {
		t.Errorf("nil train set accepted")
	}
}

func TestPartitionFashionMNIST(t *testing.T) {
	train, test := loadFashion(t)
	spec := paperSpec()
	data, err := Partition(spec, train, test, 1)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Partition(spec, train, test, 1)
	if !sameData(data, again) {
		t.Errorf("Partition of Fashion-MNIST is not deterministic")
	}
	total := 0
	sizes := make([]int, len(data))
	byCluster := make([][]*Dataset, 3)
	for i, cd := range data {
		sizes[i] = cd.Train.N + cd.Val.N + cd.Test.N
		total += sizes[i]
		for _, p := range []*Dataset{cd.Train, cd.Val, cd.Test} {
			if p.N == 0 || p.D != 784 || p.C != 10 {
				t.Fatalf("client %d: split with N=%d D=%d C=%d", i, p.N, p.D, p.C)
			}
		}
		k := clusterOf(i, 100, 3)
		byCluster[k] = append(byCluster[k], cd.Train)
	}
	// 10% of 7000 per class.
	if total != 7000 {
		t.Errorf("%d examples in total, want 7000", total)
	}
	t.Logf("client sizes: min %d, max %d", slices.Min(sizes), slices.Max(sizes))
	var means []float64
	for k, ds := range byCluster {
		m, s := clusterStats(ds)
		t.Logf("cluster %d: transformed pixels mean %.3f sd %.3f", k, m, s)
		means = append(means, m)
	}
	for a := range means {
		for b := range a {
			if math.Abs(means[a]-means[b]) < 0.05 {
				t.Errorf("clusters %d and %d: pixel means %.3f and %.3f barely differ", a, b, means[a], means[b])
			}
		}
	}
}
