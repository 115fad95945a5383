package models

import (
	"strings"
	"testing"
)

// Synthetic images: the server holds val and test, each client train rows
// of which round(ρ·train) have a label changed to a different class, and
// the record says which.
func TestNoisyLabelsSynthetic(t *testing.T) {
	for _, noise := range []string{"iid", "non-iid"} {
		src := &NoisyLabels{Images: "synthetic", Train: 50, Val: 30, Test: 20, Noise: noise, Rho: 0.4,
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
					t.Fatalf("client %d row %d: changed %v, recorded %v", c, i, changed, data[c].Noisy[i])
				}
				if changed {
					flipped++
				}
			}
			if noise == "iid" && flipped != 20 {
				t.Errorf("client %d: %d flipped, want 20", c, flipped)
			}
			if noise == "non-iid" && (flipped < 10 || flipped > 45) {
				t.Errorf("client %d: %d flipped, outside [10, 45]", c, flipped)
			}
		}
	}
	if err := (&NoisyLabels{Images: "synthetic", Train: 5, Val: 5, Test: 5, Noise: "x", Features: 2, Classes: 2}).Validate(3); err == nil || !strings.Contains(err.Error(), "noise") {
		t.Errorf("bad noise accepted: %v", err)
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
