package nn

import (
	"fmt"
	"sort"
)

// A preset builds the layer stack of a paper's network for an input shape
// and class count.
type preset struct {
	doc    string
	layers func(in Shape, classes int) []Spec
}

var presets = map[string]preset{
	"fedem-cnn": {
		doc: "conv 32 5×5, ReLU, max pool 2, conv 64 5×5, ReLU, max pool 2, dense 2048, ReLU, dense C (FedEM's CNN; 2,278,334 parameters on 1×28×28 with 62 classes)",
		layers: func(_ Shape, classes int) []Spec {
			return []Spec{
				Conv2D(32, 5, 1, 0), ReLU(), MaxPool2D(2, 2),
				Conv2D(64, 5, 1, 0), ReLU(), MaxPool2D(2, 2),
				Flatten(), Dense(2048), ReLU(), Dense(classes),
			}
		},
	},
	"fedbio-4conv": {
		doc: "4 × (conv 64 3×3, ReLU), max pool 2 after the first two, dense C (112,074 parameters on 1×28×28 with 10 classes)",
		layers: func(_ Shape, classes int) []Spec {
			return []Spec{
				Conv2D(64, 3, 1, 0), ReLU(), MaxPool2D(2, 2),
				Conv2D(64, 3, 1, 0), ReLU(), MaxPool2D(2, 2),
				Conv2D(64, 3, 1, 0), ReLU(),
				Conv2D(64, 3, 1, 0), ReLU(),
				Flatten(), Dense(classes),
			}
		},
	},
	"node-weighting": {
		doc: "conv C→C 4×4 stride 4 padding 1, norm, ReLU, conv 2 (5 on colour inputs) 2×2 stride 2 padding 1, norm, ReLU, dense C: the node-weighting paper's CNN (App. G) with its batch norms replaced by per-sample, per-channel group norms (instance norms) of the same parameters (363 parameters on 1×28×28, 1,488 on 3×32×32, 10 classes)",
		layers: func(in Shape, classes int) []Spec {
			second := 2
			if in.C > 1 {
				second = 5
			}
			return []Spec{
				Conv2D(in.C, 4, 4, 1), GroupNorm(in.C), ReLU(),
				Conv2D(second, 2, 2, 1), GroupNorm(second), ReLU(),
				Flatten(), Dense(classes),
			}
		},
	},
	"lenet": {
		doc: "conv 6 5×5, ReLU, max pool 2, conv 16 5×5, ReLU, max pool 2, dense 120, ReLU, dense 84, ReLU, dense C (LeNet-5 as FBO-AggITD's CIFAR-10 CNN; 62,006 parameters on 3×32×32 with 10 classes)",
		layers: func(_ Shape, classes int) []Spec {
			return []Spec{
				Conv2D(6, 5, 1, 0), ReLU(), MaxPool2D(2, 2),
				Conv2D(16, 5, 1, 0), ReLU(), MaxPool2D(2, 2),
				Flatten(), Dense(120), ReLU(), Dense(84), ReLU(), Dense(classes),
			}
		},
	},
}

// Presets returns the names of the preset networks, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for k := range presets {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// PresetDoc returns a one-line description of the named preset, or "" if
// there is none.
func PresetDoc(name string) string { return presets[name].doc }

// Preset returns the layer stack of the named preset network for inputs of
// shape in and the given number of classes, validated by Plan. The
// presets, named for the papers whose networks they follow:
//
//   - "fedem-cnn": conv 32 5×5, ReLU, max pool 2, conv 64 5×5, ReLU, max
//     pool 2, dense 2048, ReLU, dense C;
//   - "fedbio-4conv": 4 × (conv 64 3×3, ReLU), max pool 2 after the first
//     two, dense C;
//   - "node-weighting": conv 16 5×5, group norm, ReLU, max pool 2, conv 32
//     5×5, group norm, ReLU, max pool 2, dense C. The paper's batch norms
//     become group norms with one group (layer norm over C×H×W with a
//     per-channel scale and shift, the same 2 parameters per channel),
//     because batch statistics would couple the samples of a batch (see
//     KindGroupNorm);
//   - "lenet": conv 6 5×5, ReLU, max pool 2, conv 16 5×5, ReLU, max pool 2,
//     dense 120, ReLU, dense 84, ReLU, dense C (LeNet-5, meant for 3×32×32).
//
// No convolution is padded, so the input must be large enough for the
// kernels: at least 16×16 for fedem-cnn, node-weighting and lenet and
// 26×26 for fedbio-4conv (an error otherwise).
func Preset(name string, in Shape, classes int) ([]Spec, error) {
	p, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("nn: no preset network %q (have %v)", name, Presets())
	}
	layers := p.layers(in, classes)
	if _, err := Plan(in, layers, classes); err != nil {
		return nil, fmt.Errorf("nn: preset %q: %w", name, err)
	}
	return layers, nil
}

// The presets of the models the package's first version wrote by hand:
// the MLP's output layer sums its tangents in row order (Spec.RowOrder),
// the order of the runs recorded with it.

// SoftmaxRegression returns the layers of multinomial logistic regression:
// one dense layer of classes outputs.
func SoftmaxRegression(classes int) []Spec { return []Spec{Dense(classes)} }

// LogisticRegression returns the layers of binary logistic regression: one
// dense layer of one output, the margin z = wᵀa + c.
func LogisticRegression() []Spec { return []Spec{Dense(1)} }

// TanhMLP returns the layers of the one-hidden-layer tanh perceptron:
// dense hidden, tanh, dense classes.
func TanhMLP(hidden, classes int) []Spec {
	return []Spec{Dense(hidden), Tanh(), DenseRowOrder(classes)}
}
