package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/rng"
)

func init() {
	Sources.Register("node-shift",
		"The weighted-nodes paper's Fashion-MNIST experiment (Sec. 5, App. G): node 0 (the center) holds D^valid and D^test drawn from the target p₀, nodes 1 … minority the minority distribution, the others the majority one. Classes are drawn through super-classes C1 {2,4,6}, C2 {0,3}, C3 {1,8}, C4 {5,7,9} with P = (.42, .08, .38, .12) (minority) or (.12, .38, .08, .42) (majority), images with replacement; setting 2 permutes the labels of the majority (permutation; the paper's 2→0, 0→1, 1→5, 5→2 by default), setting 3 rotates every majority image (rotation; 90° by default, one direction per seed), setting 4 does both. Meant for the weighted-nodes server algorithms: nodes 1 … K have no validation or test data.",
		func() Source {
			return &NodeShiftData{Setting: 1, Target: "minority", Minority: 5, Train: 4000, Val: 500, Test: 5000,
				Permutation: PaperPermutation(), Rotation: 90}
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
	// Permutation and Rotation are the heterogeneity of settings 2–4.
	Permutation [][]int `yaml:"permutation" doc:"label changes [from, to] of the majority in settings 2 and 4, a bijection on the classes it names (each in 0 … 9, named once as from and once as to); [] permutes nothing (the paper: [[2, 0], [0, 1], [1, 5], [5, 2]])"`
	Rotation    int     `yaml:"rotation" doc:"degrees the majority's images turn in settings 3 and 4, in the direction drawn per seed: 90, 180 or 270 (the paper: 90)"`
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
	// Perm[c] is the label the majority's class c gets in settings 2 and
	// 4; a nil Perm is the paper's permutation.
	Perm []int
	// Rotation is the turn of settings 3 and 4 in degrees, 90, 180 or
	// 270; 0 is the paper's 90°. So the zero spec is the paper's data.
	Rotation int
}

// Super-classes and their probabilities (App. G.1.1).
var (
	nodeShiftSuper    = [4][]int{{2, 4, 6}, {0, 3}, {1, 8}, {5, 7, 9}}
	nodeShiftMinority = [4]float64{0.42, 0.08, 0.38, 0.12}
	nodeShiftMajority = [4]float64{0.12, 0.38, 0.08, 0.42}
	// nodeShiftPerm is the paper's label permutation of settings 2 and 4
	// for Fashion-MNIST and MNIST (App. G.2), as [from, to] pairs.
	nodeShiftPerm = [][2]int{{2, 0}, {0, 1}, {1, 5}, {5, 2}}
)

// PaperPermutation returns the paper's label permutation of the majority
// (App. G.2: 2→0, 0→1, 1→5, 5→2) as [from, to] pairs.
func PaperPermutation() [][]int {
	out := make([][]int, len(nodeShiftPerm))
	for i, p := range nodeShiftPerm {
		out[i] = []int{p[0], p[1]}
	}
	return out
}

// PermTable returns the table c ↦ label of the class changes pairs, for
// classes 0 … classes − 1, or an error unless every pair is [from, to]
// with both in range and the pairs a bijection on the classes they name:
// each class named at most once as from and once as to, and the froms
// the same set as the tos (so that no two classes end with one label).
func PermTable(pairs [][]int, classes int) ([]int, error) {
	table := make([]int, classes)
	for c := range table {
		table[c] = c
	}
	from, to := make([]bool, classes), make([]bool, classes)
	for i, p := range pairs {
		if len(p) != 2 {
			return nil, fmt.Errorf("permutation: entry %d is %v, not a pair [from, to]", i, p)
		}
		for _, c := range p {
			if c < 0 || c >= classes {
				return nil, fmt.Errorf("permutation: class %d of entry %d is not in 0 … %d", c, i, classes-1)
			}
		}
		if from[p[0]] {
			return nil, fmt.Errorf("permutation: class %d is changed twice", p[0])
		}
		if to[p[1]] {
			return nil, fmt.Errorf("permutation: two classes become %d", p[1])
		}
		from[p[0]], to[p[1]] = true, true
		table[p[0]] = p[1]
	}
	for c := range classes {
		if from[c] != to[c] {
			return nil, fmt.Errorf("permutation: class %d is named only as a %s, so the pairs are not a bijection on the classes they name", c, map[bool]string{true: "from", false: "to"}[from[c]])
		}
	}
	return table, nil
}

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
	if s.Perm != nil {
		if len(s.Perm) != 10 || !isPermutation(s.Perm) {
			return fmt.Errorf("the label table %v is not a permutation of the 10 classes", s.Perm)
		}
	}
	if s.Rotation < 0 || s.Rotation >= 360 || s.Rotation%90 != 0 {
		return fmt.Errorf("rotation must be 90, 180 or 270 degrees, got %d", s.Rotation)
	}
	return nil
}

func isPermutation(p []int) bool {
	seen := make([]bool, len(p))
	for _, v := range p {
		if v < 0 || v >= len(p) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
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
	perm := s.Perm
	if perm == nil {
		perm, _ = PermTable(PaperPermutation(), 10)
	}
	// Quarter turns clockwise; the direction is drawn whatever the angle,
	// so that the draws do not depend on it.
	turns := 1
	if s.Rotation != 0 {
		turns = s.Rotation / 90
	}
	if rng.New(seed, rng.Global, rng.PurposeLayout).IntN(2) != 0 {
		turns = (4 - turns) % 4
	}
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
				rotate28(out.Codes[lo:hi], src.Codes[row*src.D:(row+1)*src.D], turns)
			default:
				rotate28(out.X[lo:hi], src.Row(row), turns)
			}
			if majority && (s.Setting == 2 || s.Setting == 4) {
				y = perm[y]
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

// rotate28 writes the 28×28 image src turned clockwise by turns quarter
// turns (0 … 3) into dst.
func rotate28[T uint8 | float64](dst, src []T, turns int) {
	const n = 28
	for i := range n {
		for j := range n {
			switch turns {
			case 0:
				dst[i*n+j] = src[i*n+j]
			case 1:
				dst[i*n+j] = src[(n-1-j)*n+i]
			case 2:
				dst[i*n+j] = src[(n-1-i)*n+n-1-j]
			case 3:
				dst[i*n+j] = src[j*n+n-1-i]
			default:
				panic(fmt.Sprintf("datasets: rotate28 with %d quarter turns", turns))
			}
		}
	}
}

// Spec returns what NodeShift builds for a network of nodes nodes, the
// center included. A permutation that is not a bijection (an error from
// Validate) leaves the table nil, which is the paper's.
func (d *NodeShiftData) Spec(nodes int) NodeShiftSpec {
	perm, err := PermTable(d.Permutation, 10)
	if err != nil {
		perm = nil
	}
	return NodeShiftSpec{Nodes: nodes, Setting: d.Setting, Majority: d.Target == "majority",
		Minority: d.Minority, Train: d.Train, Val: d.Val, Test: d.Test, Perm: perm, Rotation: d.Rotation}
}

// Validate implements Source.
func (d *NodeShiftData) Validate(nodes int) error {
	if d.Target != "minority" && d.Target != "majority" {
		return fmt.Errorf("target must be minority or majority, got %q", d.Target)
	}
	if v := float64(nodes) * float64(d.Train) * 784; v > math.MaxInt32*4 {
		return fmt.Errorf("nodes × train × 784 = %.3g values is too large", v)
	}
	if _, err := PermTable(d.Permutation, 10); err != nil {
		return err
	}
	if d.Rotation != 90 && d.Rotation != 180 && d.Rotation != 270 {
		return fmt.Errorf("rotation must be 90, 180 or 270 degrees, got %d", d.Rotation)
	}
	return d.Spec(nodes).validate()
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
	return NodeShiftBlock(d.Spec(nodes), train, test, seed, lo, hi)
}
