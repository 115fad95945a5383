package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/rng"
)

func init() {
	Sources.Register("node-shift",
		"The weighted-nodes paper's Fashion-MNIST experiment (Sec. 5, App. G): node 0 (the center) holds D^valid and D^test drawn from the target p₀, nodes 1 … minority the minority distribution, the others the majority one. Classes are drawn through super-classes C1 {2,4,6}, C2 {0,3}, C3 {1,8}, C4 {5,7,9} with P = (.42, .08, .38, .12) (minority) or (.12, .38, .08, .42) (majority), images with replacement; setting 2 permutes the labels 2→0, 0→1, 1→5, 5→2 of the majority, setting 3 rotates every majority image by 90° (one direction per seed), setting 4 does both. Meant for the weighted-nodes server algorithms: nodes 1 … K have no validation or test data.",
		func() Source {
			return &NodeShiftData{Setting: 1, Target: "minority", Minority: 5, Train: 4000, Val: 500, Test: 5000}
		})
}

// NodeShiftData selects the node-shift data of the weighted-nodes paper.
type NodeShiftData struct {
	Dir      string `yaml:"dir" doc:"folder of the Fashion-MNIST IDX files; empty means /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist)"`
	Setting  int    `yaml:"setting" doc:"1 (class shift), 2 (+ label permutation of the majority), 3 (+ 90° rotation of the majority), 4 (both)"`
	Target   string `yaml:"target" doc:"minority or majority: the distribution p₀ of the center's validation and test data"`
	Minority int    `yaml:"minority" doc:"nodes 1 … minority form the minority group, the rest of the K = clients − 1 … the majority; 1 … K − 1 (the paper: 5 of 15)"`
	Train    int    `yaml:"train" doc:"training examples per node, 1 … 1048576 (the paper: 4000)"`
	Val      int    `yaml:"val" doc:"validation examples at the center, 1 … 1048576 (the paper: 500)"`
	Test     int    `yaml:"test" doc:"test examples at the center, 1 … 1048576 (the paper: 5000)"`
}

// NodeShiftSpec is what NodeShift builds.
type NodeShiftSpec struct {
	Nodes    int // K + 1, the center included
	Setting  int
	Majority bool // p₀ is the majority's distribution
	Minority int
	Train    int
	Val      int
	Test     int
}

// Super-classes and their probabilities (App. G.1.1).
var (
	nodeShiftSuper    = [4][]int{{2, 4, 6}, {0, 3}, {1, 8}, {5, 7, 9}}
	nodeShiftMinority = [4]float64{0.42, 0.08, 0.38, 0.12}
	nodeShiftMajority = [4]float64{0.12, 0.38, 0.08, 0.42}
	// nodeShiftPerm is the label permutation of settings 2 and 4 (App. G.2).
	nodeShiftPerm = map[int]int{2: 0, 0: 1, 1: 5, 5: 2}
)

func (s NodeShiftSpec) validate() error {
	k := s.Nodes - 1
	for _, c := range []struct {
		name      string
		v, lo, hi int
	}{
		{"setting", s.Setting, 1, 4}, {"minority", s.Minority, 1, k - 1},
		{"train", s.Train, 1, MaxExamplesPerClient}, {"val", s.Val, 1, MaxExamplesPerClient},
		{"test", s.Test, 1, MaxExamplesPerClient},
	} {
		if c.v < c.lo || c.v > c.hi {
			if c.name == "minority" && k < 2 {
				return fmt.Errorf("node-shift needs at least two nodes besides the center, got %d", k)
			}
			return fmt.Errorf("%s must be in [%d, %d], got %d", c.name, c.lo, c.hi, c.v)
		}
	}
	return nil
}

// NodeShift builds the data of every node from a 28×28, 10-class train and
// test set (Fashion-MNIST): node 0 gets D^valid (as Val, and as Train, its
// only training data, for local training) and D^test, drawn from p₀; node
// k ≥ 1 gets D_k^train from its group's distribution and empty Val and
// Test. Images are drawn with replacement: a super-class by P, then an
// image of it uniformly. The draws of node k come from rng.New(seed, k,
// PurposePartition), the rotation direction from rng.New(seed, Global,
// PurposeLayout).
func NodeShift(s NodeShiftSpec, train, test *Dataset, seed uint64) ([]ClientData, error) {
	return NodeShiftBlock(s, train, test, seed, 0, s.Nodes)
}

// NodeShiftBlock is NodeShift for nodes lo … hi−1 (element k is node
// lo+k, with the same bits): every node draws from its own stream, so the
// others are not drawn at all.
func NodeShiftBlock(s NodeShiftSpec, train, test *Dataset, seed uint64, lo, hi int) ([]ClientData, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	checkBlock(s.Nodes, lo, hi)
	for _, d := range []*Dataset{train, test} {
		if d.D != 28*28 || d.C != 10 {
			return nil, fmt.Errorf("node-shift needs 28×28 images of 10 classes, got %d features and %d classes", d.D, d.C)
		}
	}
	trainBy, testBy := groupByLabel(train.Y, 10), groupByLabel(test.Y, 10)
	for c := range 10 {
		if len(trainBy[c]) == 0 || len(testBy[c]) == 0 {
			return nil, fmt.Errorf("node-shift: class %d has no image in the train or the test set", c)
		}
	}
	clockwise := rng.New(seed, rng.Global, rng.PurposeLayout).IntN(2) == 0
	draw := func(src *Dataset, by [][]int, n int, majority bool, r *rand.Rand) *Dataset {
		p := nodeShiftMinority
		if majority {
			p = nodeShiftMajority
		}
		out := newLike([]*Dataset{src}, n, src.C)
		for i := range n {
			u, g := r.Float64(), 3
			for j, acc := 0, 0.0; j < 4; j++ {
				if acc += p[j]; u < acc {
					g = j
					break
				}
			}
			// An image of the super-class, uniformly: its classes pooled.
			var size int
			for _, c := range nodeShiftSuper[g] {
				size += len(by[c])
			}
			k := r.IntN(size)
			var row int
			for _, c := range nodeShiftSuper[g] {
				if k < len(by[c]) {
					row = by[c][k]
					break
				}
				k -= len(by[c])
			}
			y := src.Y[row]
			lo, hi := i*src.D, (i+1)*src.D
			// Rotation moves pixels, so it acts on the codes of a coded set.
			switch {
			case !(majority && (s.Setting == 3 || s.Setting == 4)):
				out.copyRows(i, src, row, row+1)
			case src.Coded():
				rotate28(out.Codes[lo:hi], src.Codes[row*src.D:(row+1)*src.D], clockwise)
			default:
				rotate28(out.X[lo:hi], src.Row(row), clockwise)
			}
			if majority && (s.Setting == 2 || s.Setting == 4) {
				if to, ok := nodeShiftPerm[y]; ok {
					y = to
				}
			}
			out.Y[i] = y
		}
		return out
	}
	empty := &Dataset{D: train.D, C: train.C}
	data := make([]ClientData, hi-lo)
	if inBlock(0, lo, hi) {
		r0 := rng.New(seed, 0, rng.PurposePartition)
		val := draw(train, trainBy, s.Val, s.Majority, r0)
		data[0] = ClientData{Train: val, Val: val, Test: draw(test, testBy, s.Test, s.Majority, r0)}
	}
	for k := max(lo, 1); k < hi; k++ {
		r := rng.New(seed, k, rng.PurposePartition)
		data[k-lo] = ClientData{Train: draw(train, trainBy, s.Train, k > s.Minority, r), Val: empty, Test: empty}
	}
	return data, nil
}

// rotate28 writes the 28×28 image src rotated by 90° into dst.
func rotate28[T uint8 | float64](dst, src []T, clockwise bool) {
	const n = 28
	for i := range n {
		for j := range n {
			if clockwise {
				dst[i*n+j] = src[(n-1-j)*n+i]
			} else {
				dst[i*n+j] = src[j*n+n-1-i]
			}
		}
	}
}

func (d *NodeShiftData) spec(nodes int) NodeShiftSpec {
	return NodeShiftSpec{Nodes: nodes, Setting: d.Setting, Majority: d.Target == "majority",
		Minority: d.Minority, Train: d.Train, Val: d.Val, Test: d.Test}
}

// Validate implements Source.
func (d *NodeShiftData) Validate(nodes int) error {
	if d.Target != "minority" && d.Target != "majority" {
		return fmt.Errorf("target must be minority or majority, got %q", d.Target)
	}
	if v := float64(nodes) * float64(d.Train) * 784; v > math.MaxInt32*4 {
		return fmt.Errorf("nodes × train × 784 = %.3g values is too large", v)
	}
	return d.spec(nodes).validate()
}

// Shape implements Source.
func (d *NodeShiftData) Shape() (int, int) { return 28 * 28, 10 }

// Examples implements Source: the files' 70,000 images, then the draws.
func (d *NodeShiftData) Examples(nodes int) int64 {
	return 70000 + int64(nodes-1)*int64(d.Train) + int64(d.Val) + int64(d.Test)
}

// BlockExamples implements BlockExampler: the files' images, then the
// block's draws.
func (d *NodeShiftData) BlockExamples(_, block int) int64 {
	return 70000 + int64(block)*int64(d.Train) + int64(d.Val) + int64(d.Test)
}

// Files implements Source.
func (d *NodeShiftData) Files() []string { return FashionMNIST(d.Dir).paths() }

// Missing returns the files that do not exist.
func (d *NodeShiftData) Missing() []string { return FashionMNIST(d.Dir).Missing() }

// Load implements Source.
func (d *NodeShiftData) Load(nodes int, seed uint64) ([]ClientData, error) {
	return d.LoadBlock(nodes, seed, 0, nodes)
}

// LoadBlock implements BlockSource.
func (d *NodeShiftData) LoadBlock(nodes int, seed uint64, lo, hi int) ([]ClientData, error) {
	checkBlock(nodes, lo, hi)
	train, test, err := FashionMNIST(d.Dir).Load()
	if err != nil {
		return nil, err
	}
	train.C, test.C = 10, 10
	return NodeShiftBlock(d.spec(nodes), train, test, seed, lo, hi)
}
