package datasets

import (
	"fmt"
	"math"

	"hgpsim/internal/rng"
)

func init() {
	Sources.Register("noisy-labels",
		"Comm-FedBiO's noisy-label federation: node 0 is the server, holding a clean validation set of val training images and the test split; nodes 1 … m hold train images each, a fraction ρ of whose labels is replaced (flip uniform: by a uniformly random different class; pair: class c becomes c+1 mod C) (noise iid: ρ = rho on every client; non-iid: ρ_i ~ U[rho_min, rho_max], as the paper: each client perturbed with a random ratio from [0.2, 0.9]). The corrupted rows are recorded (the ground truth of mislabel detection). Images from Fashion-MNIST (dir, or the package dataset-fashion-mnist) or, for tests, the synthetic Gaussian mixture.",
		func() Source {
			return &NoisyLabels{Images: "fashion-mnist", Train: 500, Val: 500, Noise: "iid", Flip: "uniform", Rho: 0.4,
				RhoMin: 0.2, RhoMax: 0.9, Features: 20, Classes: 5}
		})
}

// NoisyLabels is the data of Comm-FedBiO's experiments (Sec. 6 of the
// paper): the same number of training images per client, drawn without
// replacement from the training split, a clean validation set at the
// server, and label noise on the clients.
type NoisyLabels struct {
	Images   string  `yaml:"images" doc:"fashion-mnist, or synthetic (the Gaussian mixture of features × classes, for tests)"`
	Dir      string  `yaml:"dir" doc:"folder of the Fashion-MNIST IDX files; default /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist)"`
	Train    int     `yaml:"train" doc:"training images per client, 1 … 1048576 (the paper: 500)"`
	Val      int     `yaml:"val" doc:"clean validation images at the server, 1 … 1048576 (the paper: 500)"`
	Test     int     `yaml:"test" doc:"test images at the server; 0 means the whole test split (10,000 for Fashion-MNIST; synthetic needs test >= 1)"`
	Noise    string  `yaml:"noise" doc:"iid (every client ρ = rho) or non-iid (ρ_i ~ U[rho_min, rho_max] per client)"`
	Flip     string  `yaml:"flip" doc:"how a corrupted label changes: uniform (the default; a uniformly random other class; the paper says only that labels are randomly perturbed) or pair (class c becomes c+1 mod C, the pair-flip noise of the label-noise literature)"`
	Rho      float64 `yaml:"rho" doc:"iid noise rate, in [0, 1] (the paper: 0.4)"`
	RhoMin   float64 `yaml:"rho_min" doc:"non-iid: lowest noise rate, in [0, 1] (the paper: 0.2)"`
	RhoMax   float64 `yaml:"rho_max" doc:"non-iid: highest noise rate, in [rho_min, 1] (the paper: 0.9)"`
	Features int     `yaml:"features" doc:"synthetic: features, 1 … 4096"`
	Classes  int     `yaml:"classes" doc:"synthetic: classes, 2 … 1000"`
}

// Validate implements Source.
func (n *NoisyLabels) Validate(clients int) error {
	bad := func(v float64) bool { return math.IsNaN(v) || v < 0 || v > 1 }
	switch {
	case n.Images != "fashion-mnist" && n.Images != "synthetic":
		return fmt.Errorf("images must be fashion-mnist or synthetic, got %q", n.Images)
	case clients < 2:
		return fmt.Errorf("noisy-labels needs a server (node 0) and at least one client, got %d nodes", clients)
	case n.Train < 1 || n.Train > MaxExamplesPerClient:
		return fmt.Errorf("train must be in [1, %d], got %d", MaxExamplesPerClient, n.Train)
	case n.Val < 1 || n.Val > MaxExamplesPerClient:
		return fmt.Errorf("val must be in [1, %d], got %d", MaxExamplesPerClient, n.Val)
	case n.Test < 0 || n.Test > MaxExamplesPerClient:
		return fmt.Errorf("test must be in [0, %d], got %d", MaxExamplesPerClient, n.Test)
	case n.Noise != "iid" && n.Noise != "non-iid":
		return fmt.Errorf("noise must be iid or non-iid, got %q", n.Noise)
	case n.Flip != "" && n.Flip != "uniform" && n.Flip != "pair":
		return fmt.Errorf("flip must be uniform or pair, got %q", n.Flip)
	case bad(n.Rho) || bad(n.RhoMin) || bad(n.RhoMax):
		return fmt.Errorf("rho, rho_min, rho_max must be in [0, 1], got %v, %v, %v", n.Rho, n.RhoMin, n.RhoMax)
	case n.RhoMin > n.RhoMax:
		return fmt.Errorf("rho_min %v exceeds rho_max %v", n.RhoMin, n.RhoMax)
	}
	if n.Images == "synthetic" {
		switch {
		case n.Features < 1 || n.Features > 4096:
			return fmt.Errorf("features must be in [1, 4096], got %d", n.Features)
		case n.Classes < 2 || n.Classes > MaxClasses:
			return fmt.Errorf("classes must be in [2, %d], got %d", MaxClasses, n.Classes)
		case n.Test < 1:
			return fmt.Errorf("synthetic images need test >= 1")
		}
		return nil
	}
	if need := int64(clients-1)*int64(n.Train) + int64(n.Val); need > 60000 {
		return fmt.Errorf("%d clients × %d training images + %d validation images exceed the 60,000 of the training split", clients-1, n.Train, n.Val)
	}
	if n.Test > 10000 {
		return fmt.Errorf("test must be at most 10,000 (the test split), got %d", n.Test)
	}
	return nil
}

// Shape implements Source.
func (n *NoisyLabels) Shape() (int, int) {
	if n.Images == "synthetic" {
		return n.Features, n.Classes
	}
	return 28 * 28, 10
}

// Examples implements Source.
func (n *NoisyLabels) Examples(clients int) int64 {
	if n.Images == "synthetic" {
		return int64(clients)*int64(n.Train) + int64(n.Val) + int64(n.Test)
	}
	return 70000
}

// Files implements Source.
func (n *NoisyLabels) Files() []string {
	if n.Images == "synthetic" {
		return nil
	}
	return FashionMNIST(n.Dir).paths()
}

// Missing returns the files that do not exist.
func (n *NoisyLabels) Missing() []string {
	if n.Images == "synthetic" {
		return nil
	}
	return FashionMNIST(n.Dir).Missing()
}

// pools returns the training and test pools the images come from.
func (n *NoisyLabels) pools(clients int, seed uint64) (train, test *Dataset, err error) {
	if n.Images == "fashion-mnist" {
		return FashionMNIST(n.Dir).Load()
	}
	data, err := Synthetic(SyntheticSpec{Clients: 1, Classes: n.Classes, Features: n.Features,
		Train: (clients-1)*n.Train + n.Val, Val: 1, Test: n.Test, Alpha: 1000, Separation: 1, Shift: 0, Noise: 1}, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("noisy-labels: synthetic images: %w", err)
	}
	return data[0].Train, data[0].Test, nil
}

// Load implements Source: node 0 gets the validation set (Val) and the
// test set (Test), nodes 1 … clients−1 a training set with noisy labels
// and the record of which labels were changed.
func (n *NoisyLabels) Load(clients int, seed uint64) ([]ClientData, error) {
	return n.LoadBlock(clients, seed, 0, clients)
}

// LoadBlock implements BlockSource: the image pools and their permutation
// are built whole; only the block's rows are copied.
func (n *NoisyLabels) LoadBlock(clients int, seed uint64, lo, hi int) ([]ClientData, error) {
	if err := n.Validate(clients); err != nil {
		return nil, err
	}
	checkBlock(clients, lo, hi)
	train, test, err := n.pools(clients, seed)
	if err != nil {
		return nil, err
	}
	need := (clients-1)*n.Train + n.Val
	if train.N < need {
		return nil, fmt.Errorf("noisy-labels: need %d training images, the split has %d", need, train.N)
	}
	layout := rng.New(seed, rng.Global, rng.PurposeLayout)
	perm := layout.Perm(train.N)[:need]
	// Coded images stay coded: gather copies their bytes.
	take := func(rows []int) *Dataset { return gather([]*Dataset{train}, train.C, rows) }
	out := make([]ClientData, hi-lo)
	empty := func() *Dataset { return &Dataset{D: train.D, C: train.C} }
	if inBlock(0, lo, hi) {
		testSet := test
		if n.Test > 0 && n.Test < test.N {
			testSet = gather([]*Dataset{test}, test.C, layout.Perm(test.N)[:n.Test])
		}
		out[0] = ClientData{Train: empty(), Val: take(perm[:n.Val]), Test: testSet}
	}
	for c := max(lo, 1); c < hi; c++ {
		first := n.Val + (c-1)*n.Train
		d := take(perm[first : first+n.Train])
		r := rng.New(seed, c, rng.PurposeNoise)
		rho := n.Rho
		if n.Noise == "non-iid" {
			rho = n.RhoMin + (n.RhoMax-n.RhoMin)*r.Float64()
		}
		flips := int(math.Round(rho * float64(d.N)))
		noisy := make([]bool, d.N)
		for _, i := range r.Perm(d.N)[:flips] {
			if n.Flip == "pair" {
				d.Y[i] = (d.Y[i] + 1) % d.C
			} else {
				// A uniformly random class other than the true one.
				y := r.IntN(d.C - 1)
				if y >= d.Y[i] {
					y++
				}
				d.Y[i] = y
			}
			noisy[i] = true
		}
		out[c-lo] = ClientData{Train: d, Val: empty(), Test: empty(), Noisy: noisy}
	}
	return out, nil
}
