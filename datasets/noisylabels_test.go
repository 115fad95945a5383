package datasets

import (
	"math"
	"strings"
	"testing"
)

// Synthetic images, both flips, both noise settings: the server holds val
// and test, each client train rows of which round(ρ_i·train) have a label
// changed — to another class (uniform) or to c+1 mod C (pair) — and the
// record says exactly which.
func TestNoisyLabelsSynthetic(t *testing.T) {
	for _, flip := range []string{"uniform", "pair"} {
		for _, noise := range []string{"iid", "non-iid"} {
			src := &NoisyLabels{Images: "synthetic", Train: 50, Val: 30, Test: 20, Noise: noise, Flip: flip, Rho: 0.4,
				RhoMin: 0.2, RhoMax: 0.9, Features: 6, Classes: 4}
			data, err := src.Load(5, 3)
			if err != nil {
				t.Fatal(err)
			}
			clean, err := (&NoisyLabels{Images: "synthetic", Train: 50, Val: 30, Test: 20, Noise: noise,
				Features: 6, Classes: 4}).Load(5, 3)
			if err != nil {
				t.Fatal(err)
			}
			if data[0].Val.N != 30 || data[0].Test.N != 20 || data[0].Train.N != 0 {
				t.Fatalf("server data %d/%d/%d", data[0].Train.N, data[0].Val.N, data[0].Test.N)
			}
			for c := 1; c < 5; c++ {
				d, orig := data[c].Train, clean[c].Train
				if d.N != 50 || len(data[c].Noisy) != 50 {
					t.Fatalf("client %d: %d rows", c, d.N)
				}
				flipped := 0
				for i := range d.N {
					changed := d.Y[i] != orig.Y[i]
					if changed != data[c].Noisy[i] {
						t.Fatalf("%s/%s client %d row %d: changed %v, recorded %v", flip, noise, c, i, changed, data[c].Noisy[i])
					}
					if changed && flip == "pair" && d.Y[i] != (orig.Y[i]+1)%4 {
						t.Fatalf("pair client %d row %d: %d became %d, want %d", c, i, orig.Y[i], d.Y[i], (orig.Y[i]+1)%4)
					}
					if changed {
						flipped++
					}
				}
				if noise == "iid" && flipped != 20 {
					t.Errorf("%s client %d: %d flipped, want 20", flip, c, flipped)
				}
				if noise == "non-iid" && (flipped < 10 || flipped > 45) {
					t.Errorf("%s client %d: %d flipped, outside [10, 45]", flip, c, flipped)
				}
			}
		}
	}
	if err := (&NoisyLabels{Images: "synthetic", Train: 5, Val: 5, Test: 5, Noise: "x", Features: 2, Classes: 2}).Validate(3); err == nil || !strings.Contains(err.Error(), "noise") {
		t.Errorf("bad noise accepted: %v", err)
	}
	if err := (&NoisyLabels{Images: "synthetic", Train: 5, Val: 5, Test: 5, Noise: "iid", Flip: "swap", Features: 2, Classes: 2}).Validate(3); err == nil || !strings.Contains(err.Error(), "flip") {
		t.Errorf("bad flip accepted: %v", err)
	}
}

// Non-iid rates per client: each client's share of flipped labels is its
// own ρ_i, spread over [rho_min, rho_max] like U[0.2, 0.9] (mean 0.55,
// standard deviation 0.7/√12 ≈ 0.202), and iid rates are ρ on every
// client; the flip kind does not change which rows are corrupted.
func TestNoisyLabelsRatesPerClient(t *testing.T) {
	const clients, train = 201, 200
	rates := func(noise, flip string) ([]float64, [][]bool) {
		src := &NoisyLabels{Images: "synthetic", Train: train, Val: 10, Test: 5, Noise: noise, Flip: flip, Rho: 0.4,
			RhoMin: 0.2, RhoMax: 0.9, Features: 3, Classes: 3}
		data, err := src.Load(clients, 7)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		var rec [][]bool
		for c := 1; c < clients; c++ {
			n := 0
			for _, b := range data[c].Noisy {
				if b {
					n++
				}
			}
			out = append(out, float64(n)/train)
			rec = append(rec, data[c].Noisy)
		}
		return out, rec
	}
	iid, _ := rates("iid", "pair")
	for c, r := range iid {
		if r != 0.4 {
			t.Fatalf("iid client %d: rate %v, want 0.4", c+1, r)
		}
	}
	uni, recU := rates("non-iid", "uniform")
	pair, recP := rates("non-iid", "pair")
	var mean, sq float64
	lo, hi := 1.0, 0.0
	for c, r := range pair {
		if r != uni[c] {
			t.Fatalf("client %d: rate %v with pair flips, %v with uniform", c+1, r, uni[c])
		}
		for j := range recP[c] {
			if recP[c][j] != recU[c][j] {
				t.Fatalf("client %d row %d: corrupted with one flip kind and not the other", c+1, j)
			}
		}
		if r < 0.2-0.5/train || r > 0.9+0.5/train {
			t.Errorf("client %d: rate %v outside [0.2, 0.9]", c+1, r)
		}
		mean += r
		sq += r * r
		lo, hi = min(lo, r), max(hi, r)
	}
	n := float64(len(pair))
	mean /= n
	sd := math.Sqrt(sq/n - mean*mean)
	// 200 draws: the mean's standard error is 0.014, the sd's about 0.01.
	if math.Abs(mean-0.55) > 0.05 || math.Abs(sd-0.202) > 0.04 || lo > 0.25 || hi < 0.85 {
		t.Errorf("non-iid rates: mean %.3f (want 0.55), sd %.3f (want 0.202), range [%.3f, %.3f]", mean, sd, lo, hi)
	}
}

func TestNoisyLabelsFashionMNIST(t *testing.T) {
	src := &NoisyLabels{Images: "fashion-mnist", Train: 500, Val: 500, Test: 1000, Noise: "iid", Rho: 0.4, RhoMin: 0.2, RhoMax: 0.9}
	if m := src.Missing(); len(m) > 0 {
		t.Skipf("Fashion-MNIST not installed (missing %v); apt-get install %s", m, FashionMNISTPackage)
	}
	data, err := src.Load(11, 1)
	if err != nil {
		t.Fatal(err)
	}
	if data[0].Val.N != 500 || data[0].Test.N != 1000 || data[3].Train.N != 500 || data[3].Train.D != 784 {
		t.Fatalf("sizes %d %d %d", data[0].Val.N, data[0].Test.N, data[3].Train.N)
	}
	n := 0
	for _, b := range data[3].Noisy {
		if b {
			n++
		}
	}
	if n != 200 {
		t.Errorf("%d flipped, want 200", n)
	}
}
