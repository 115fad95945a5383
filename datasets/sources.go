package datasets

import (
	"fmt"
	"math"
	"slices"

	"hgpsim/internal/registry"
)

// Bounds of the data parameters a scenario can name.
const (
	MaxClasses           = 1000
	MaxFeatures          = 1 << 20
	MaxExamplesPerClient = 1 << 20
)

// Source is a data kind of the scenario's `data` section: its parameters
// and how to give every client its train, validation and test data. See
// Sources.
type Source interface {
	// Validate checks the parameters for this many clients, without
	// reading any file.
	Validate(clients int) error
	// Shape returns the number of features and classes the data will have,
	// known without reading any file.
	Shape() (features, classes int)
	// Examples returns an upper bound on the number of examples the run
	// holds over all clients, for the resource estimate.
	Examples(clients int) int64
	// Files lists the files Load reads (none for generated data), and
	// Missing those of them that do not exist, so that validation can
	// skip them and a run can refuse early.
	Files() []string
	// Load builds every client's data. Missing files are an error naming
	// them and how to install them.
	Load(clients int, seed uint64) ([]ClientData, error)
}

// Sources holds the data kinds, selected by `data.kind`.
var Sources = registry.New[Source]("data", "kind")

func init() {
	Sources.Register("synthetic",
		"Embedded generator, no download: a Gaussian mixture with class means shared by all clients, per-client Dirichlet(alpha) label skew and a per-client feature shift; x = μ_y + s_i + noise·N(0, I).",
		func() Source {
			return &SyntheticData{Classes: 5, Features: 20, Train: 150, Val: 50, Test: 100,
				Alpha: 0.4, Separation: 0.5, Shift: 1, Noise: 1}
		})
	Sources.Register("fashion-mnist",
		"Fashion-MNIST IDX files (70,000 28×28 images, 10 classes), from dir or the Debian package dataset-fashion-mnist; pooled, subsampled by fraction, split among clients by Dirichlet(alpha) per label, each client's share split into train / validation / test.",
		func() Source { return newIDXData("fashion-mnist") })
	Sources.Register("mnist",
		"MNIST IDX files in dir (70,000 28×28 digits, 10 classes), partitioned like fashion-mnist.",
		func() Source { return newIDXData("mnist") })
	Sources.Register("emnist",
		"EMNIST IDX files of one split in dir (emnist-<split>-{train,test}-{images-idx3,labels-idx1}-ubyte.gz), partitioned like fashion-mnist.",
		func() Source { d := newIDXData("emnist"); d.Split = "balanced"; return d })
}

// SyntheticData selects Synthetic.
type SyntheticData struct {
	Classes    int     `yaml:"classes" doc:"C, 2 … 1000"`
	Features   int     `yaml:"features" doc:"D, 1 … 1048576"`
	Train      int     `yaml:"train" doc:"training examples per client, 1 … 1048576 (equal across clients, so the pooled loss is the mean of the clients' losses)"`
	Val        int     `yaml:"val" doc:"validation examples per client, 1 … 1048576"`
	Test       int     `yaml:"test" doc:"test examples per client, 1 … 1048576"`
	Alpha      float64 `yaml:"alpha" doc:"Dirichlet(α) label skew per client, finite, > 0; smaller is more skewed"`
	Separation float64 `yaml:"separation" doc:"class means μ_c ~ N(0, separation² I), finite, > 0"`
	Shift      float64 `yaml:"shift" doc:"per-client feature shift s_i ~ N(0, shift² I), finite, >= 0"`
	Noise      float64 `yaml:"noise" doc:"within-class standard deviation, finite, >= 0"`
}

func (s *SyntheticData) spec(clients int) SyntheticSpec {
	return SyntheticSpec{Clients: clients, Classes: s.Classes, Features: s.Features,
		Train: s.Train, Val: s.Val, Test: s.Test,
		Alpha: s.Alpha, Separation: s.Separation, Shift: s.Shift, Noise: s.Noise}
}

// Validate implements Source.
func (s *SyntheticData) Validate(clients int) error {
	for _, c := range []struct {
		name      string
		v, lo, hi int
	}{
		{"classes", s.Classes, 2, MaxClasses}, {"features", s.Features, 1, MaxFeatures},
		{"train", s.Train, 1, MaxExamplesPerClient}, {"val", s.Val, 1, MaxExamplesPerClient},
		{"test", s.Test, 1, MaxExamplesPerClient},
	} {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("%s must be in [%d, %d], got %d", c.name, c.lo, c.hi, c.v)
		}
	}
	for _, c := range []struct {
		name     string
		v        float64
		positive bool
	}{{"alpha", s.Alpha, true}, {"separation", s.Separation, true}, {"shift", s.Shift, false}, {"noise", s.Noise, false}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 || (c.positive && c.v == 0) {
			rel := ">= 0"
			if c.positive {
				rel = "> 0"
			}
			return fmt.Errorf("%s must be a finite number %s, got %v", c.name, rel, c.v)
		}
	}
	return nil
}

// Shape implements Source.
func (s *SyntheticData) Shape() (int, int) { return s.Features, s.Classes }

// Examples implements Source.
func (s *SyntheticData) Examples(clients int) int64 {
	return int64(clients) * int64(s.Train+s.Val+s.Test)
}

// BlockExamples implements BlockExampler.
func (s *SyntheticData) BlockExamples(_, block int) int64 { return s.Examples(block) }

// Files implements Source: none.
func (*SyntheticData) Files() []string { return nil }

// Load implements Source.
func (s *SyntheticData) Load(clients int, seed uint64) ([]ClientData, error) {
	return Synthetic(s.spec(clients), seed)
}

// LoadBlock implements BlockSource.
func (s *SyntheticData) LoadBlock(clients int, seed uint64, lo, hi int) ([]ClientData, error) {
	return SyntheticBlock(s.spec(clients), seed, lo, hi)
}

// IDXData selects an IDX image data set partitioned among clients
// (Partition).
type IDXData struct {
	name      string
	Dir       string  `yaml:"dir" doc:"folder of the IDX files (gzip or plain); fashion-mnist defaults to /usr/share/datasets/fashion-mnist (apt-get install dataset-fashion-mnist), mnist and emnist have no default"`
	Split     string  `yaml:"split,omitempty" doc:"emnist split: balanced, byclass, bymerge, digits, letters or mnist"`
	Fraction  float64 `yaml:"fraction" doc:"share of the pooled train+test set kept (stratified), in (0, 1]; the PDBO paper uses 0.1"`
	Alpha     float64 `yaml:"alpha" doc:"Dirichlet(α) label skew of the split among clients, finite, > 0"`
	Clusters  int     `yaml:"clusters" doc:"clients split into this many input-normalization clusters (mean, std ~ U[0, 1]), 0 (none) … clients; the cooperative paper uses 3"`
	TestFrac  float64 `yaml:"test_frac" doc:"per-client test share, in (0, 1)"`
	TrainFrac float64 `yaml:"train_frac" doc:"share of the rest used for training (the rest validates), in (0, 1)"`
}

func newIDXData(name string) *IDXData {
	return &IDXData{name: name, Fraction: 0.1, Alpha: 0.4, TestFrac: 0.2, TrainFrac: 0.75}
}

// emnistClasses is C per EMNIST split (letters labels 1…26, so 27).
var emnistClasses = map[string]int{"balanced": 47, "byclass": 62, "bymerge": 47, "digits": 10, "letters": 27, "mnist": 10}

// emnistExamples is the size of train plus test per EMNIST split.
var emnistExamples = map[string]int64{"balanced": 131600, "byclass": 814255, "bymerge": 814255, "digits": 280000, "letters": 145600, "mnist": 70000}

func (d *IDXData) source() IDXSource {
	switch d.name {
	case "fashion-mnist":
		return FashionMNIST(d.Dir)
	case "mnist":
		return MNIST(d.Dir)
	}
	return EMNIST(d.Dir, d.Split)
}

// Validate implements Source.
func (d *IDXData) Validate(clients int) error {
	if d.name != "fashion-mnist" && d.Dir == "" {
		return fmt.Errorf("dir: %s has no standard location; give the folder of its IDX files", d.name)
	}
	if d.name == "emnist" {
		if _, ok := emnistClasses[d.Split]; !ok {
			splits := make([]string, 0, len(emnistClasses))
			for s := range emnistClasses {
				splits = append(splits, s)
			}
			slices.Sort(splits)
			return fmt.Errorf("split must be one of %v, got %q", splits, d.Split)
		}
	} else if d.Split != "" {
		return fmt.Errorf("split applies to emnist only, not %s", d.name)
	}
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case bad(d.Fraction) || d.Fraction <= 0 || d.Fraction > 1:
		return fmt.Errorf("fraction must be in (0, 1], got %v", d.Fraction)
	case bad(d.Alpha) || d.Alpha <= 0:
		return fmt.Errorf("alpha must be a finite number > 0, got %v", d.Alpha)
	case d.Clusters < 0 || d.Clusters > clients:
		return fmt.Errorf("clusters must be 0 (no normalization) or in [1, clients = %d], got %d", clients, d.Clusters)
	case bad(d.TestFrac) || d.TestFrac <= 0 || d.TestFrac >= 1:
		return fmt.Errorf("test_frac must be in (0, 1), got %v", d.TestFrac)
	case bad(d.TrainFrac) || d.TrainFrac <= 0 || d.TrainFrac >= 1:
		return fmt.Errorf("train_frac must be in (0, 1), got %v", d.TrainFrac)
	}
	return nil
}

// Shape implements Source.
func (d *IDXData) Shape() (int, int) {
	if d.name == "emnist" {
		return 28 * 28, emnistClasses[d.Split]
	}
	return 28 * 28, 10
}

// Examples implements Source: every image of both files, since loading
// holds them all before the fraction is kept.
func (d *IDXData) Examples(int) int64 {
	if d.name == "emnist" {
		return emnistExamples[d.Split]
	}
	return 70000
}

// Splits returns about how many examples the clients keep in all, for
// training, validation and test: the fraction of Examples, split as the
// partition splits it; for the time estimate.
func (d *IDXData) Splits(clients int) (train, val, test int64) {
	kept := float64(d.Examples(clients)) * d.Fraction
	tr := (kept - kept*d.TestFrac) * d.TrainFrac
	return int64(tr), int64(kept - kept*d.TestFrac - tr), int64(kept * d.TestFrac)
}

// Files implements Source.
func (d *IDXData) Files() []string { return d.source().paths() }

// Missing returns the files that do not exist.
func (d *IDXData) Missing() []string { return d.source().Missing() }

// Load implements Source.
func (d *IDXData) Load(clients int, seed uint64) ([]ClientData, error) {
	return d.LoadBlock(clients, seed, 0, clients)
}

// LoadBlock implements BlockSource: the files are read and the partition
// drawn whole; only the block's rows are copied.
func (d *IDXData) LoadBlock(clients int, seed uint64, lo, hi int) ([]ClientData, error) {
	checkBlock(clients, lo, hi)
	src := d.source()
	train, test, err := src.Load()
	if err != nil {
		return nil, err
	}
	f, c := d.Shape()
	if train.D != f || train.C > c {
		return nil, fmt.Errorf("datasets: %s files have %d features and %d classes, expected %d and at most %d", d.name, train.D, train.C, f, c)
	}
	// The shape is fixed before the files are read (validation needs it);
	// a file set that lacks the highest class still describes C classes.
	train.C, test.C = c, c
	data, err := PartitionBlock(PartitionSpec{Clients: clients, Fraction: d.Fraction, Alpha: d.Alpha,
		Clusters: d.Clusters, TestFrac: d.TestFrac, TrainFrac: d.TrainFrac}, train, test, seed, lo, hi)
	if err != nil {
		return nil, err
	}
	// Partition leaves every client at least three examples, which the
	// split spreads over all three sets: this guards that promise.
	for k, cd := range data {
		if cd.Train.N == 0 || cd.Val.N == 0 || cd.Test.N == 0 {
			return nil, fmt.Errorf("client %d got %d/%d/%d train/val/test examples; use fewer clients or a larger fraction", lo+k, cd.Train.N, cd.Val.N, cd.Test.N)
		}
	}
	return data, nil
}

// codedSource is implemented by sources whose datasets hold their features
// as one-byte codes (coded Datasets).
type codedSource interface{ coded() bool }

func (*IDXData) coded() bool       { return true }
func (*FederatedData) coded() bool { return true }
func (*NodeShiftData) coded() bool { return true }
func (n *NoisyLabels) coded() bool { return n.Images != "synthetic" }

// ExampleBytes returns the memory one example of src holds once loaded:
// 8 bytes for its label and, per feature, 1 byte when the source keeps its
// images coded (IDX files and every source built on them) or 8 bytes of
// float64 otherwise (generated data).
func ExampleBytes(src Source, features int) int64 {
	per := int64(8)
	if c, ok := src.(codedSource); ok && c.coded() {
		per = 1
	}
	return per*int64(features) + 8
}
