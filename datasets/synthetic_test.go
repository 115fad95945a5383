package datasets

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"
)

func baseSpec() SyntheticSpec {
	return SyntheticSpec{
		Clients: 8, Classes: 10, Features: 5,
		Train: 200, Val: 20, Test: 30,
		Alpha: 0.1, Separation: 2, Shift: 0.5, Noise: 1,
	}
}

// digest hashes every byte of the generated data, in a fixed order.
func digest(data []ClientData) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for _, cd := range data {
		for _, d := range []*Dataset{cd.Train, cd.Val, cd.Test} {
			for _, v := range []int{d.N, d.D, d.C} {
				binary.LittleEndian.PutUint64(buf[:], uint64(v))
				h.Write(buf[:])
			}
			for _, v := range d.X {
				binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
				h.Write(buf[:])
			}
			for _, v := range d.Y {
				binary.LittleEndian.PutUint64(buf[:], uint64(v))
				h.Write(buf[:])
			}
		}
	}
	return h.Sum64()
}

func TestSyntheticDeterministic(t *testing.T) {
	a, err := Synthetic(baseSpec(), 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthetic(baseSpec(), 42)
	if digest(a) != digest(b) {
		t.Errorf("same spec and seed gave different bytes")
	}
	c, _ := Synthetic(baseSpec(), 43)
	if digest(a) == digest(c) {
		t.Errorf("seeds 42 and 43 gave identical data")
	}
}

func TestSyntheticClientIndependentOfClientCount(t *testing.T) {
	// Client i's stream is keyed by i alone, so adding clients must not
	// change the data of existing ones.
	few := baseSpec()
	few.Clients = 2
	a, _ := Synthetic(few, 9)
	b, _ := Synthetic(baseSpec(), 9)
	if digest(a) != digest(b[:2]) {
		t.Errorf("data of clients 0 and 1 changed when more clients were added")
	}
}

func TestSyntheticSizes(t *testing.T) {
	spec := baseSpec()
	data, err := Synthetic(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != spec.Clients {
		t.Fatalf("%d clients, want %d", len(data), spec.Clients)
	}
	for i, cd := range data {
		for _, s := range []struct {
			name string
			d    *Dataset
			n    int
		}{{"Train", cd.Train, spec.Train}, {"Val", cd.Val, spec.Val}, {"Test", cd.Test, spec.Test}} {
			d := s.d
			if d.N != s.n || d.D != spec.Features || d.C != spec.Classes || len(d.X) != s.n*spec.Features || len(d.Y) != s.n {
				t.Errorf("client %d %s: N=%d D=%d C=%d len(X)=%d len(Y)=%d", i, s.name, d.N, d.D, d.C, len(d.X), len(d.Y))
			}
			for _, y := range d.Y {
				if y < 0 || y >= spec.Classes {
					t.Fatalf("client %d %s: label %d", i, s.name, y)
				}
			}
			for _, v := range d.X {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("client %d %s: feature %v", i, s.name, v)
				}
			}
		}
	}
}

// histogram returns the label frequencies of d.
func histogram(d *Dataset) []float64 {
	h := make([]float64, d.C)
	for _, y := range d.Y {
		h[y] += 1 / float64(d.N)
	}
	return h
}

// meanTV returns the mean total-variation distance between each client's
// training label histogram and the pooled one (0: identical, 1: disjoint).
func meanTV(data []ClientData) float64 {
	parts := make([]*Dataset, len(data))
	for i, cd := range data {
		parts[i] = cd.Train
	}
	pooled := histogram(Pool(parts...))
	var sum float64
	for _, p := range parts {
		var tv float64
		for c, v := range histogram(p) {
			tv += math.Abs(v - pooled[c])
		}
		sum += tv / 2
	}
	return sum / float64(len(data))
}

func TestSyntheticLabelSkew(t *testing.T) {
	skewed := baseSpec()
	skewed.Clients = 20
	skewed.Alpha = 0.1
	flat := skewed
	flat.Alpha = 1000
	a, _ := Synthetic(skewed, 5)
	b, _ := Synthetic(flat, 5)
	tvSkew, tvFlat := meanTV(a), meanTV(b)
	t.Logf("mean TV(client, pooled): α=0.1 → %.3f, α=1000 → %.3f", tvSkew, tvFlat)
	// With α = 0.1 over 10 classes a client puts most of its mass on one or
	// two classes, far from the pooled histogram; with α = 1000 the only
	// difference is sampling noise of 200 draws (TV ≈ 0.1).
	if tvSkew < 0.5 {
		t.Errorf("α=0.1: mean TV %.3f, want >= 0.5", tvSkew)
	}
	if tvFlat > 0.15 {
		t.Errorf("α=1000: mean TV %.3f, want <= 0.15", tvFlat)
	}
	// The splits of one client share its label distribution.
	var tvSplit float64
	for _, cd := range a {
		tr, te := histogram(cd.Train), histogram(cd.Test)
		for c := range tr {
			tvSplit += math.Abs(tr[c]-te[c]) / 2 / float64(len(a))
		}
	}
	if tvSplit > 0.25 {
		t.Errorf("mean TV between a client's Train and Test labels %.3f, want <= 0.25", tvSplit)
	}
}

func TestSyntheticTinyAlpha(t *testing.T) {
	// α = 1e-3 makes every Gamma draw underflow in linear space; the log-space
	// Dirichlet must still give one dominant class per client, not NaN.
	spec := baseSpec()
	spec.Alpha = 1e-3
	data, err := Synthetic(spec, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, cd := range data {
		h := histogram(cd.Train)
		if slices.Max(h) < 0.99 {
			t.Errorf("client %d: α=1e-3 histogram %v, want one class", i, h)
		}
	}
}

func TestSyntheticShiftAndMeans(t *testing.T) {
	// With Noise = 0 each row is exactly μ_y + s_i, so rows of one client with
	// the same label are equal, and two clients' rows of the same label differ
	// by s_i − s_j, the same for every label.
	spec := baseSpec()
	spec.Noise = 0
	spec.Alpha = 1000
	data, _ := Synthetic(spec, 4)
	first := func(d *Dataset, y int) []float64 {
		for i, l := range d.Y {
			if l == y {
				return d.Row(i)
			}
		}
		t.Fatalf("label %d absent", y)
		return nil
	}
	a, b := data[0].Train, data[1].Train
	for i := range a.N {
		if !slices.Equal(a.Row(i), first(a, a.Y[i])) {
			t.Fatalf("Noise=0: rows of label %d differ within a client", a.Y[i])
		}
	}
	diff := func(y int) []float64 {
		ra, rb := first(a, y), first(b, y)
		out := make([]float64, len(ra))
		for j := range ra {
			out[j] = ra[j] - rb[j]
		}
		return out
	}
	if d0, d1 := diff(0), diff(1); relDiff(d0, d1) > 1e-12 || norm2(d0) == 0 {
		t.Errorf("client shift differs between labels: %v vs %v", d0, d1)
	}
}

func TestLogGammaMoments(t *testing.T) {
	// Gamma(k, 1) has mean k and variance k; 40000 draws pin both to a few
	// percent, enough to catch a wrong sampler (e.g. a missing boost factor).
	r := testRand(t, 99)
	for _, k := range []float64{0.3, 1, 2.5, 10} {
		const n = 40000
		var s, s2 float64
		for range n {
			g := math.Exp(logGamma(k, r))
			s += g
			s2 += g * g
		}
		mean := s / n
		variance := s2/n - mean*mean
		if math.Abs(mean-k) > 5*math.Sqrt(k/n) {
			t.Errorf("Gamma(%v): mean %.4f, want %v", k, mean, k)
		}
		if math.Abs(variance-k) > 0.06*k {
			t.Errorf("Gamma(%v): variance %.4f, want %v", k, variance, k)
		}
	}
}

func TestSyntheticErrors(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*SyntheticSpec)
	}{
		{"Clients", func(s *SyntheticSpec) { s.Clients = 0 }},
		{"Classes", func(s *SyntheticSpec) { s.Classes = 1 }},
		{"Features", func(s *SyntheticSpec) { s.Features = 0 }},
		{"Train", func(s *SyntheticSpec) { s.Train = 0 }},
		{"Val", func(s *SyntheticSpec) { s.Val = 0 }},
		{"Test", func(s *SyntheticSpec) { s.Test = -1 }},
		{"Alpha", func(s *SyntheticSpec) { s.Alpha = 0 }},
		{"Alpha", func(s *SyntheticSpec) { s.Alpha = -1 }},
		{"Alpha", func(s *SyntheticSpec) { s.Alpha = math.NaN() }},
		{"Separation", func(s *SyntheticSpec) { s.Separation = 0 }},
		{"Separation", func(s *SyntheticSpec) { s.Separation = math.Inf(1) }},
		{"Shift", func(s *SyntheticSpec) { s.Shift = -0.1 }},
		{"Noise", func(s *SyntheticSpec) { s.Noise = -1 }},
		{"Noise", func(s *SyntheticSpec) { s.Noise = math.NaN() }},
		{"values", func(s *SyntheticSpec) { s.Clients = 1 << 20; s.Features = 1 << 20 }},
	} {
		spec := baseSpec()
		tc.edit(&spec)
		data, err := Synthetic(spec, 1)
		if err == nil || data != nil {
			t.Errorf("%s: spec %+v accepted", tc.field, spec)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %q does not name the field", tc.field, err)
		}
	}
	// Every bad field is reported, not only the first.
	_, err := Synthetic(SyntheticSpec{}, 1)
	for _, f := range []string{"Clients", "Classes", "Features", "Train", "Val", "Test", "Alpha", "Separation"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("zero spec: error %v does not name %s", err, f)
		}
	}
	// Zero Shift and Noise are legal.
	ok := baseSpec()
	ok.Shift, ok.Noise = 0, 0
	if _, err := Synthetic(ok, 1); err != nil {
		t.Errorf("Shift=0, Noise=0 rejected: %v", err)
	}
}
