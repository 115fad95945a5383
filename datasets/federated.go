package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"hgpsim/internal/rng"
)

func init() {
	Sources.Register("federated",
		"The federated split of FedNest and FBO-AggITD (Sec. 5): node 0 is the server and holds the official test split (test_frac of it, stratified) and nothing else; the m clients (nodes 1 … m) share per_client·m images of the official training split, iid (shuffled, equal parts) or by McMahan et al.'s shards (sorted by label, shards·m equal shards, shards to each client); each client's part is split into train and validation (val_frac). For server algorithms only.",
		func() Source {
			return &FederatedData{Base: "fashion-mnist", Split: "iid", Shards: 2, PerClient: 600, ValFrac: 0.2, TestFrac: 1, Normalize: true}
		})
}

// FederatedData is the server-and-clients split of an IDX image data set.
type FederatedData struct {
	Base      string  `yaml:"base" doc:"fashion-mnist (default folder /usr/share/datasets/fashion-mnist, apt-get install dataset-fashion-mnist) or mnist (dir required)"`
	Dir       string  `yaml:"dir" doc:"folder of the IDX files (gzip or plain); empty: the standard folder of fashion-mnist"`
	Split     string  `yaml:"split" doc:"iid (shuffled, equal parts) or shards (non-iid: sorted by label, shards·m shards, shards per client)"`
	Shards    int     `yaml:"shards" doc:"shards per client for split shards, 1 … 100 (McMahan et al. use 2)"`
	PerClient int     `yaml:"per_client" doc:"training-split images per client, 2 … 60000/m (600 = the whole split for m = 100); fewer subsample, stratified"`
	ValFrac   float64 `yaml:"val_frac" doc:"share of each client's images kept for validation (f_i), in (0, 1)"`
	TestFrac  float64 `yaml:"test_frac" doc:"share of the official test split the server evaluates on (stratified), in (0, 1]"`
	Normalize bool    `yaml:"normalize" doc:"standardize pixels with the training split's mean and deviation (one scalar each, as the papers' code does with transforms.Normalize); false keeps [0, 1]"`
}

// trainImages is the size of the official training split of (Fashion-)MNIST.
const trainImages = 60000

func (f *FederatedData) source() IDXSource {
	if f.Base == "mnist" {
		return MNIST(f.Dir)
	}
	return FashionMNIST(f.Dir)
}

// Validate implements Source; nodes counts the server.
func (f *FederatedData) Validate(nodes int) error {
	m := nodes - 1
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case f.Base != "fashion-mnist" && f.Base != "mnist":
		return fmt.Errorf("base must be fashion-mnist or mnist, got %q", f.Base)
	case f.Base == "mnist" && f.Dir == "":
		return fmt.Errorf("dir: mnist has no standard location; give the folder of its IDX files")
	case f.Split != "iid" && f.Split != "shards":
		return fmt.Errorf("split must be iid or shards, got %q", f.Split)
	case f.Shards < 1 || f.Shards > 100:
		return fmt.Errorf("shards must be in [1, 100], got %d", f.Shards)
	case m < 1:
		return fmt.Errorf("needs a server (node 0) and at least one client")
	case f.PerClient < 2 || int64(f.PerClient)*int64(m) > trainImages:
		return fmt.Errorf("per_client must be in [2, %d] for %d clients, got %d", trainImages/m, m, f.PerClient)
	case f.Split == "shards" && f.PerClient < f.Shards:
		return fmt.Errorf("per_client (%d) must be at least shards (%d)", f.PerClient, f.Shards)
	case bad(f.ValFrac) || f.ValFrac <= 0 || f.ValFrac >= 1:
		return fmt.Errorf("val_frac must be in (0, 1), got %v", f.ValFrac)
	case bad(f.TestFrac) || f.TestFrac <= 0 || f.TestFrac > 1:
		return fmt.Errorf("test_frac must be in (0, 1], got %v", f.TestFrac)
	}
	return nil
}

// Shape implements Source.
func (*FederatedData) Shape() (int, int) { return 28 * 28, 10 }

// Examples implements Source: both files are held while loading.
func (*FederatedData) Examples(int) int64 { return 70000 }

// Files implements Source.
func (f *FederatedData) Files() []string { return f.source().paths() }

// Missing returns the files that do not exist.
func (f *FederatedData) Missing() []string { return f.source().Missing() }

// Load implements Source: node 0 (the server) gets the test split, nodes
// 1 … m their train and validation parts.
func (f *FederatedData) Load(nodes int, seed uint64) ([]ClientData, error) {
	return f.LoadBlock(nodes, seed, 0, nodes)
}

// LoadBlock implements BlockSource: the files are read and the split drawn
// whole; only the block's rows are copied.
func (f *FederatedData) LoadBlock(nodes int, seed uint64, lo, hi int) ([]ClientData, error) {
	checkBlock(nodes, lo, hi)
	train, test, err := f.source().Load()
	if err != nil {
		return nil, err
	}
	if train.D != 28*28 || train.C > 10 {
		return nil, fmt.Errorf("datasets: %s files have %d features and %d classes, expected 784 and at most 10", f.Base, train.D, train.C)
	}
	train.C, test.C = 10, 10
	if f.Normalize {
		standardize(train, test)
	}
	return federatedSplit(train, test, nodes-1, f.Split == "shards", f.Shards, f.PerClient, f.ValFrac, f.TestFrac,
		rng.New(seed, rng.Global, rng.PurposePartition), lo, hi)
}

// FederatedSplit splits train among m clients (iid or by shards of sorted
// labels) after keeping perClient·m of its rows (stratified), splits each
// client's rows into train and validation, and gives the server (index 0
// of the result) testFrac of test. Clients are indices 1 … m.
func FederatedSplit(train, test *Dataset, m int, shards bool, perShard, perClient int, valFrac, testFrac float64, r *rand.Rand) ([]ClientData, error) {
	return federatedSplit(train, test, m, shards, perShard, perClient, valFrac, testFrac, r, 0, m+1)
}

// federatedSplit is FederatedSplit for nodes lo … hi−1 (0 is the server):
// every draw is made, in the same order, and only the block's rows are
// copied.
func federatedSplit(train, test *Dataset, m int, shards bool, perShard, perClient int, valFrac, testFrac float64, r *rand.Rand, lo, hi int) ([]ClientData, error) {
	train.CheckShape()
	test.CheckShape()
	keep := m * perClient
	if m < 1 || perClient < 2 || keep > train.N {
		return nil, fmt.Errorf("datasets: %d clients × %d images do not fit the %d training images", m, perClient, train.N)
	}
	checkBlock(m+1, lo, hi)
	// rows index the pool (the kept rows of train, in order) and pool
	// maps them to train's rows, so the pool is never copied.
	var pool []int
	if keep < train.N {
		pool = stratifiedSample(train.Y, train.C, float64(keep)/float64(train.N), r)
	} else {
		pool = make([]int, train.N)
		for i := range pool {
			pool[i] = i
		}
	}
	rows := make([]int, len(pool))
	for i := range rows {
		rows[i] = i
	}
	var parts [][]int
	if !shards {
		r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		parts = cut(rows, m)
	} else {
		// McMahan et al.: sort by label, cut into perShard·m shards, deal
		// them out at random.
		slices.SortStableFunc(rows, func(a, b int) int { return train.Y[pool[a]] - train.Y[pool[b]] })
		sh := cut(rows, perShard*m)
		order := r.Perm(len(sh))
		parts = make([][]int, m)
		for k := range m {
			for _, s := range order[k*perShard : (k+1)*perShard] {
				parts[k] = append(parts[k], sh[s]...)
			}
		}
	}
	out := make([]ClientData, hi-lo)
	empty := func() *Dataset { return newLike([]*Dataset{train}, 0, train.C) }
	ts := test
	if testFrac < 1 {
		test.CheckShape()
		kept := stratifiedSample(test.Y, test.C, testFrac, r) // drawn even when the server is not in the block
		if inBlock(0, lo, hi) {
			ts = gather([]*Dataset{test}, test.C, kept)
		}
	}
	if inBlock(0, lo, hi) {
		out[0-lo] = ClientData{Train: empty(), Val: empty(), Test: ts}
	}
	src := []*Dataset{train}
	toTrain := func(rows []int) []int {
		for k, i := range rows {
			rows[k] = pool[i]
		}
		return rows
	}
	for k, p := range parts {
		if len(p) < 2 {
			return nil, fmt.Errorf("datasets: client %d got %d images; use fewer clients or more per_client", k+1, len(p))
		}
		r.Shuffle(len(p), func(a, b int) { p[a], p[b] = p[b], p[a] })
		if !inBlock(k+1, lo, hi) {
			continue
		}
		nv := min(max(int(math.Round(valFrac*float64(len(p)))), 1), len(p)-1)
		va, tr := p[:nv], p[nv:]
		slices.Sort(va)
		slices.Sort(tr)
		// Sorted pool rows are sorted train rows: pool is increasing.
		out[k+1-lo] = ClientData{Train: gather(src, train.C, toTrain(tr)), Val: gather(src, train.C, toTrain(va)), Test: empty()}
	}
	return out, nil
}

// cut splits rows into k consecutive parts of sizes differing by at most
// one.
func cut(rows []int, k int) [][]int {
	out := make([][]int, k)
	for i := range k {
		out[i] = rows[i*len(rows)/k : (i+1)*len(rows)/k]
	}
	return out
}

// standardize maps every pixel v of both sets to (v − mean)/std with the
// mean and deviation over all pixels of train.
func standardize(train, test *Dataset) {
	// The sums run over the pixels in row order, coded or not: a sum over a
	// histogram of the codes would be faster but round differently.
	var sum, sq float64
	add := func(v float64) {
		sum += v
		sq += v * v
	}
	n := float64(train.N * train.D)
	if train.Coded() {
		for _, c := range train.Codes {
			add(train.Levels[c])
		}
	} else {
		for _, v := range train.X {
			add(v)
		}
	}
	mean := sum / n
	std := math.Sqrt(max(sq/n-mean*mean, 0))
	if std == 0 {
		std = 1
	}
	for _, d := range []*Dataset{train, test} {
		d.transform(func(v float64) float64 { return (v - mean) / std })
	}
}
