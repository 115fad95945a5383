package experiments

import (
	"fmt"

	"hgpsim/datasets"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
)

// oneDimSource returns the data section of the experiment's runs: each
// client's one-dimensional two-class data. With synthetic data, two classes
// of one feature of the generator, the rest of the data section as given;
// with data.kind fashion-mnist or mnist, as in the paper with MNIST, the
// mean pixel of two classes (h.Classes) of the real images, relabelled 0/1
// and split among clients at random.
func oneDimSource(src registry.Choice[datasets.Source], h *HGPError) registry.Choice[datasets.Source] {
	if sd, ok := src.Params.(*datasets.SyntheticData); ok {
		d := *sd
		d.Classes, d.Features = 2, 1
		return registry.Choice[datasets.Source]{Name: src.Name, Params: &d}
	}
	return registry.Choice[datasets.Source]{Name: src.Name, Params: &meanPixel{Images: src.Params.(*datasets.IDXData),
		MNIST: src.Name == "mnist", Classes: h.Classes, Train: h.Train, Val: h.Val, Test: h.Test}}
}

// meanPixel is the mean pixel of two classes of an image data set as one
// feature: a data source only this experiment builds.
// Its fields are what a run folder's scenario.yaml says of it.
type meanPixel struct {
	Images  *datasets.IDXData `yaml:"images"`
	MNIST   bool              `yaml:"mnist"` // MNIST's files, else Fashion-MNIST's
	Classes [2]int            `yaml:"classes"`
	// Examples per client.
	Train int `yaml:"train"`
	Val   int `yaml:"val"`
	Test  int `yaml:"test"`
}

func (m *meanPixel) Validate(int) error {
	for _, v := range []int{m.Train, m.Val, m.Test} {
		if v < 1 || v > datasets.MaxExamplesPerClient {
			return fmt.Errorf("examples per client must be in [1, %d], got %d, %d, %d", datasets.MaxExamplesPerClient, m.Train, m.Val, m.Test)
		}
	}
	return nil
}

func (m *meanPixel) Shape() (int, int)        { return 1, 2 }
func (m *meanPixel) Examples(nodes int) int64 { return int64(nodes * (m.Train + m.Val + m.Test)) }
func (m *meanPixel) Files() []string          { return m.Images.Files() }

// Missing returns the image files that do not exist.
func (m *meanPixel) Missing() []string { return m.Images.Missing() }

func (m *meanPixel) Load(n int, seed uint64) ([]datasets.ClientData, error) {
	src := datasets.FashionMNIST(m.Images.Dir)
	if m.MNIST {
		src = datasets.MNIST(m.Images.Dir)
	}
	train, _, err := src.Load()
	if err != nil {
		return nil, err
	}
	pair := m.Classes
	var rows []int
	for i, y := range train.Y {
		if y == pair[0] || y == pair[1] {
			rows = append(rows, i)
		}
	}
	r := rng.New(seed, rng.Global, rng.PurposePartition)
	r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
	per := m.Train + m.Val + m.Test
	if len(rows) < n*per {
		return nil, fmt.Errorf("classes %v have %d images, %d clients need %d", pair, len(rows), n, n*per)
	}
	take := func(rs []int) *datasets.Dataset {
		d := &datasets.Dataset{X: make([]float64, len(rs)), Y: make([]int, len(rs)), N: len(rs), D: 1, C: 2}
		for k, row := range rs {
			s := 0.0
			for _, v := range train.Row(row) {
				s += v
			}
			d.X[k] = s / float64(train.D)
			if train.Y[row] == pair[1] {
				d.Y[k] = 1
			}
		}
		return d
	}
	out := make([]datasets.ClientData, n)
	for i := range out {
		rs := rows[i*per : (i+1)*per]
		out[i] = datasets.ClientData{Train: take(rs[:m.Train]),
			Val:  take(rs[m.Train : m.Train+m.Val]),
			Test: take(rs[m.Train+m.Val:])}
	}
	return out, nil
}

// l2Rate returns the L2 rate of a model kind's parameters.
func l2Rate(a models.Architecture) float64 {
	switch m := a.(type) {
	case *models.SoftmaxSpec:
		return m.L2
	case *models.LogisticSpec:
		return m.L2
	case *models.MLPSpec:
		return m.L2
	}
	return 0
}
