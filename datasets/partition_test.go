package datasets

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// tracedData returns n rows whose first feature is the row's index i + base
// (so a copied row can be traced back) and whose other features are
// uniform in [0, 1), with labels label(i).
func tracedData(r *rand.Rand, n, d, c, base int, label func(i int) int) *Dataset {
	ds := &Dataset{X: make([]float64, n*d), Y: make([]int, n), N: n, D: d, C: c}
	for i := range n {
		ds.X[i*d] = float64(i + base)
		for j := 1; j < d; j++ {
			ds.X[i*d+j] = r.Float64()
		}
		ds.Y[i] = label(i)
	}
	return ds
}

// origin returns the traced index of each row of d.
func origin(d *Dataset) []int {
	out := make([]int, d.N)
	for i := range out {
		out[i] = int(d.Row(i)[0])
	}
	return out
}

// checkRowsOf fails unless every row of part is, feature for feature and
// label, the traced row of src.
func checkRowsOf(t *testing.T, part, src *Dataset) {
	t.Helper()
	if part.D != src.D || part.C != src.C {
		t.Fatalf("D=%d C=%d, source D=%d C=%d", part.D, part.C, src.D, src.C)
	}
	for k, i := range origin(part) {
		if !slices.Equal(part.Row(k), src.Row(i)) || part.Y[k] != src.Y[i] {
			t.Fatalf("row %d is not row %d of the source", k, i)
		}
	}
}

// skewedLabels gives label i%c: every label equally often.
func cyclic(c int) func(int) int { return func(i int) int { return i % c } }

func TestSubsample(t *testing.T) {
	r := testRand(t, 1)
	// Labels 0…4 with 100, 200, …, 500 rows.
	d := tracedData(r, 1500, 3, 5, 0, func(i int) int {
		switch {
		case i < 100:
			return 0
		case i < 300:
			return 1
		case i < 600:
			return 2
		case i < 1000:
			return 3
		}
		return 4
	})
	s := Subsample(d, 0.1, r)
	if s.N != 150 {
		t.Fatalf("N = %d, want 150", s.N)
	}
	checkRowsOf(t, s, d)
	o := origin(s)
	if !slices.IsSorted(o) || len(slices.Compact(slices.Clone(o))) != len(o) {
		t.Errorf("rows not in source order or duplicated: %v", o)
	}
	for c, want := range []float64{10, 20, 30, 40, 50} {
		if got := histogram(s)[c] * float64(s.N); math.Abs(got-want) > 1e-9 {
			t.Errorf("label %d: %v rows, want %v", c, got, want)
		}
	}
	// Another draw picks other rows.
	if slices.Equal(origin(Subsample(d, 0.1, r)), o) {
		t.Errorf("two draws chose the same rows")
	}
	all := Subsample(d, 1, r)
	if !slices.Equal(all.X, d.X) || !slices.Equal(all.Y, d.Y) || &all.X[0] == &d.X[0] {
		t.Errorf("frac 1 is not a fresh copy of d")
	}
	for _, f := range []float64{0, -0.1, 1.5, math.NaN()} {
		mustPanic(t, "Subsample frac", "must be in (0, 1]", func() { Subsample(d, f, r) })
	}
}

// labelTV returns the mean total-variation distance between each client's
// label histogram and d's.
func labelTV(d *Dataset, clients [][]int) float64 {
	global := histogram(d)
	var sum float64
	for _, rows := range clients {
		h := make([]float64, d.C)
		for _, i := range rows {
			h[d.Y[i]] += 1 / float64(len(rows))
		}
		var tv float64
		for c := range h {
			tv += math.Abs(h[c]-global[c]) / 2
		}
		sum += tv
	}
	return sum / float64(len(clients))
}

func TestDirichletPartition(t *testing.T) {
	d := tracedData(testRand(t, 2), 7000, 2, 10, 0, cyclic(10))
	for _, alpha := range []float64{0.1, 0.4, 100} {
		clients, err := DirichletPartition(d, 100, alpha, testRand(t, 3))
		if err != nil {
			t.Fatalf("α=%v: %v", alpha, err)
		}
		if len(clients) != 100 {
			t.Fatalf("α=%v: %d clients", alpha, len(clients))
		}
		seen := make([]bool, d.N)
		total := 0
		for k, rows := range clients {
			if len(rows) < minClientExamples {
				t.Errorf("α=%v: client %d has %d rows", alpha, k, len(rows))
			}
			if !slices.IsSorted(rows) {
				t.Errorf("α=%v: client %d rows not sorted", alpha, k)
			}
			for _, i := range rows {
				if seen[i] {
					t.Fatalf("α=%v: row %d given twice", alpha, i)
				}
				seen[i] = true
			}
			total += len(rows)
		}
		if total != d.N {
			t.Errorf("α=%v: %d rows given out, want %d", alpha, total, d.N)
		}
		again, _ := DirichletPartition(d, 100, alpha, testRand(t, 3))
		if !slices.EqualFunc(clients, again, slices.Equal) {
			t.Errorf("α=%v: same seed, different partition", alpha)
		}
	}
}

func TestDirichletLabelSkew(t *testing.T) {
	d := tracedData(testRand(t, 4), 7000, 1, 10, 0, cyclic(10))
	skew, err := DirichletPartition(d, 50, 0.1, testRand(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	flat, err := DirichletPartition(d, 50, 100, testRand(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	tvSkew, tvFlat := labelTV(d, skew), labelTV(d, flat)
	t.Logf("mean TV(client, global): α=0.1 → %.3f, α=100 → %.3f", tvSkew, tvFlat)
	if tvSkew < 0.5 || tvFlat > 0.15 {
		t.Errorf("α=0.1: TV %.3f (want >= 0.5); α=100: TV %.3f (want <= 0.15)", tvSkew, tvFlat)
	}
}

func TestDirichletPartitionErrors(t *testing.T) {
	d := tracedData(testRand(t, 6), 150, 1, 2, 0, cyclic(2))
	r := testRand(t, 7)
	for _, tc := range []struct {
		n     int
		alpha float64
		want  []string
	}{
		{0, 1, []string{"n = 0"}},
		{5, 0, []string{"α = 0"}},
		{5, math.Inf(1), []string{"α = +Inf"}},
		{5, math.NaN(), []string{"α = NaN"}},
		{51, 1, []string{"n = 51", "at least 153"}},
		// 150 rows for 50 clients leaves each exactly 3; with α = 0.01 each
		// label goes almost whole to one client, so no draw succeeds.
		{50, 0.01, []string{"n = 50", "α = 0.01", "1000 draws"}},
	} {
		clients, err := DirichletPartition(d, tc.n, tc.alpha, r)
		if err == nil || clients != nil {
			t.Errorf("n=%d α=%v accepted", tc.n, tc.alpha)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("n=%d α=%v: error %q lacks %q", tc.n, tc.alpha, err, w)
			}
		}
	}
}

func TestSplitClient(t *testing.T) {
	d := tracedData(testRand(t, 8), 200, 2, 3, 0, cyclic(3))
	r := testRand(t, 9)
	for _, tc := range []struct {
		m                    int
		train, val, test     int
		testFrac, trainToVal float64
	}{
		{100, 60, 20, 20, 0.2, 0.75},
		{10, 6, 2, 2, 0.2, 0.75},
		{5, 3, 1, 1, 0.2, 0.75},
		{3, 1, 1, 1, 0.2, 0.75},  // each split clamped to one row
		{4, 2, 1, 1, 0.01, 0.99}, // tiny fractions still leave one row
		{10, 1, 1, 8, 0.99, 0.5}, // and huge ones leave train and val one
		{2, 2, 0, 0, 0.2, 0.75},  // too few: all train
		{1, 1, 0, 0, 0.2, 0.75},
		{0, 0, 0, 0, 0.2, 0.75},
	} {
		rows := make([]int, tc.m)
		for k := range rows {
			rows[k] = 2 * k // every other row of d
		}
		cd := SplitClient(d, rows, tc.testFrac, tc.trainToVal, r)
		if cd.Train.N != tc.train || cd.Val.N != tc.val || cd.Test.N != tc.test {
			t.Errorf("m=%d fracs %v, %v: sizes %d/%d/%d, want %d/%d/%d", tc.m, tc.testFrac, tc.trainToVal,
				cd.Train.N, cd.Val.N, cd.Test.N, tc.train, tc.val, tc.test)
		}
		var all []int
		for _, part := range []*Dataset{cd.Train, cd.Val, cd.Test} {
			part.CheckShape()
			checkRowsOf(t, part, d)
			if !slices.IsSorted(origin(part)) {
				t.Errorf("m=%d: split rows not in source order", tc.m)
			}
			all = append(all, origin(part)...)
		}
		slices.Sort(all)
		if !slices.Equal(all, rows) {
			t.Errorf("m=%d: splits do not partition the rows", tc.m)
		}
	}
	// nil rows means all rows; the same stream gives the same split.
	a := SplitClient(d, nil, 0.2, 0.75, testRand(t, 10))
	b := SplitClient(d, nil, 0.2, 0.75, testRand(t, 10))
	if a.Train.N+a.Val.N+a.Test.N != d.N || digest([]ClientData{a}) != digest([]ClientData{b}) {
		t.Errorf("nil rows: sizes %d/%d/%d or not deterministic", a.Train.N, a.Val.N, a.Test.N)
	}
	for _, f := range [][2]float64{{0, 0.75}, {1, 0.75}, {0.2, 0}, {0.2, 1}, {math.NaN(), 0.5}} {
		mustPanic(t, "SplitClient fractions", "must be in (0, 1)", func() { SplitClient(d, nil, f[0], f[1], r) })
	}
}

// clusterStats returns the mean and standard deviation of all features of
// the given datasets.
func clusterStats(ds []*Dataset) (mean, std float64) {
	var n, s, s2 float64
	for _, d := range ds {
		for _, v := range d.X {
			n++
			s += v
			s2 += v * v
		}
	}
	mean = s / n
	return mean, math.Sqrt(s2/n - mean*mean)
}

func TestClusterNormalize(t *testing.T) {
	d := tracedData(testRand(t, 11), 1000, 4, 5, 0, cyclic(5))
	// Drop the trace column's influence: make every feature a pixel.
	raw := slices.Clone(d.X)
	for i := range d.N {
		d.X[i*d.D] = raw[i*d.D+1]
	}
	clients, err := DirichletPartition(d, 10, 1, testRand(t, 12))
	if err != nil {
		t.Fatal(err)
	}
	out, norms, err := ClusterNormalize(d, clients, 3, testRand(t, 13))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 10 || len(norms) != 3 {
		t.Fatalf("%d datasets, %d normalizations", len(out), len(norms))
	}
	// Clusters of 10 clients in order: 4, 3, 3.
	wantCluster := []int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}
	byCluster := make([][]*Dataset, 3)
	for i, ds := range out {
		k := wantCluster[i]
		byCluster[k] = append(byCluster[k], ds)
		nm := norms[k]
		if ds.N != len(clients[i]) || ds.D != d.D || ds.C != d.C {
			t.Fatalf("client %d: N=%d D=%d C=%d", i, ds.N, ds.D, ds.C)
		}
		for r, row := range clients[i] {
			src := d.Row(row)
			for j, v := range ds.Row(r) {
				if math.Abs(v*nm.Std+nm.Mean-src[j]) > 1e-12 {
					t.Fatalf("client %d row %d: %v is not (%v − %v)/%v", i, r, v, src[j], nm.Mean, nm.Std)
				}
			}
			if ds.Y[r] != d.Y[row] {
				t.Fatalf("client %d row %d: label changed", i, r)
			}
		}
	}
	// Pixels are U[0, 1): mean 1/2, sd √(1/12). Each cluster shifts and
	// scales them by its own parameters, so its statistics differ.
	type stat struct{ mean, std float64 }
	stats := make([]stat, 3)
	for k, nm := range norms {
		if nm.Mean < 0 || nm.Mean >= 1 || nm.Std < minClusterStd || nm.Std >= 1 {
			t.Errorf("cluster %d: %+v out of range", k, nm)
		}
		m, s := clusterStats(byCluster[k])
		stats[k] = stat{m, s}
		wantM, wantS := (0.5-nm.Mean)/nm.Std, math.Sqrt(1.0/12)/nm.Std
		t.Logf("cluster %d: mean %.3f sd %.3f, expected ≈ %.3f, %.3f (%+v)", k, m, s, wantM, wantS, nm)
		if math.Abs(m-wantM) > 0.05*wantS || math.Abs(s-wantS) > 0.05*wantS {
			t.Errorf("cluster %d: mean %.3f sd %.3f, want ≈ %.3f, %.3f", k, m, s, wantM, wantS)
		}
	}
	for a := range stats {
		for b := range a {
			if math.Abs(stats[a].mean-stats[b].mean) < 0.05 && math.Abs(stats[a].std-stats[b].std) < 0.05 {
				t.Errorf("clusters %d and %d have the same statistics %+v", a, b, stats[a])
			}
		}
	}
	for _, k := range []int{0, -1, 11} {
		if _, _, err := ClusterNormalize(d, clients, k, testRand(t, 13)); err == nil || !strings.Contains(err.Error(), "[1, 10]") {
			t.Errorf("%d clusters: error %v", k, err)
		}
	}
}

func TestClusterStdFloor(t *testing.T) {
	// Over many draws some Std falls below the floor and is raised to it.
	norms := drawNormalizations(1000, testRand(t, 14))
	floored := 0
	for _, nm := range norms {
		if nm.Std < minClusterStd {
			t.Fatalf("Std %v below the floor", nm.Std)
		}
		if nm.Std == minClusterStd {
			floored++
		}
	}
	if floored == 0 {
		t.Errorf("no Std was floored in 1000 draws")
	}
}
