package models

import (
	"fmt"
	"math"
	"strings"

	"hgpsim/internal/vec"
	"hgpsim/models/nn"
)

// CNNSpec selects a Net: a preset of package nn or a layer list.
type CNNSpec struct {
	L2     float64     `yaml:"l2" doc:"L2 rate on all parameters, finite, >= 0"`
	Preset string      `yaml:"preset" doc:"a paper's net: fedem-cnn, fedbio-4conv, node-weighting or lenet (docs/scenarios.md); empty with layers"`
	Layers []LayerSpec `yaml:"layers" doc:"the layers in order when preset is empty; the last must output one value per class"`
	Input  []int       `yaml:"input" doc:"[channels, height, width] of a row; empty: 1×s×s when the data has s² features, 3×s×s for 3s²"`
}

// LayerSpec is one layer of CNNSpec.Layers.
type LayerSpec struct {
	Kind    string `yaml:"kind" doc:"conv2d, maxpool2d, avgpool2d, relu, tanh, softplus, flatten, dense or groupnorm"`
	Out     int    `yaml:"out" doc:"output channels (conv2d), outputs (dense) or groups (groupnorm)"`
	Kernel  int    `yaml:"kernel" doc:"square kernel or window size (conv2d, pools)"`
	Stride  int    `yaml:"stride" doc:"stride (conv2d, pools); 0: 1 for conv2d, the window for pools"`
	Padding int    `yaml:"padding" doc:"zero padding on every side (conv2d)"`
}

// layerKinds maps the scenario names to nn's kinds and the keys each takes.
var layerKinds = map[string]struct {
	kind nn.Kind
	keys string // the LayerSpec keys besides kind that the layer reads
}{
	"conv2d":    {nn.KindConv2D, "out kernel stride padding"},
	"maxpool2d": {nn.KindMaxPool2D, "kernel stride"},
	"avgpool2d": {nn.KindAvgPool2D, "kernel stride"},
	"relu":      {nn.KindReLU, ""},
	"tanh":      {nn.KindTanh, ""},
	"softplus":  {nn.KindSoftplus, ""},
	"flatten":   {nn.KindFlatten, ""},
	"dense":     {nn.KindDense, "out"},
	"groupnorm": {nn.KindGroupNorm, "out"},
}

// spec converts one layer, refusing keys the layer does not read so that a
// misplaced key is not silently ignored.
func (l LayerSpec) spec() (nn.Spec, error) {
	k, ok := layerKinds[l.Kind]
	if !ok {
		return nn.Spec{}, fmt.Errorf("unknown kind %q (want one of conv2d, maxpool2d, avgpool2d, relu, tanh, softplus, flatten, dense, groupnorm)", l.Kind)
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"out", l.Out}, {"kernel", l.Kernel}, {"stride", l.Stride}, {"padding", l.Padding}} {
		if f.v != 0 && !strings.Contains(k.keys, f.key) {
			return nn.Spec{}, fmt.Errorf("%s takes no %s", l.Kind, f.key)
		}
		if f.v < 0 {
			return nn.Spec{}, fmt.Errorf("%s must be >= 0, got %d", f.key, f.v)
		}
	}
	return nn.Spec{Kind: k.kind, Out: l.Out, KH: l.Kernel, KW: l.Kernel, Stride: l.Stride, Pad: l.Padding}, nil
}

// shape returns the input shape of a row of features values.
func (s *CNNSpec) shape(features int) (nn.Shape, error) {
	if len(s.Input) > 0 {
		if len(s.Input) != 3 {
			return nn.Shape{}, fmt.Errorf("input must be [channels, height, width], got %d numbers", len(s.Input))
		}
		in := nn.Shape{C: s.Input[0], H: s.Input[1], W: s.Input[2]}
		if in.C < 1 || in.H < 1 || in.W < 1 || int64(in.C)*int64(in.H)*int64(in.W) != int64(features) {
			return nn.Shape{}, fmt.Errorf("input %v must be positive and hold the data's %d features", s.Input, features)
		}
		return in, nil
	}
	for _, c := range []int{1, 3} {
		if features%c != 0 {
			continue
		}
		side := int(math.Round(math.Sqrt(float64(features / c))))
		if c*side*side == features {
			return nn.Shape{C: c, H: side, W: side}, nil
		}
	}
	return nn.Shape{}, fmt.Errorf("cannot infer the input shape of %d features: set input: [channels, height, width]", features)
}

// layers returns the preset's or the listed layers.
func (s *CNNSpec) layers(in nn.Shape, classes int) ([]nn.Spec, error) {
	switch {
	case s.Preset != "" && len(s.Layers) > 0:
		return nil, fmt.Errorf("give preset or layers, not both")
	case s.Preset != "":
		ls, err := nn.Preset(s.Preset, in, classes)
		if err != nil {
			return nil, fmt.Errorf("preset: %w (presets: %s)", err, strings.Join(nn.Presets(), ", "))
		}
		return ls, nil
	case len(s.Layers) == 0:
		return nil, fmt.Errorf("give a preset (%s) or layers", strings.Join(nn.Presets(), ", "))
	}
	out := make([]nn.Spec, len(s.Layers))
	for i, l := range s.Layers {
		sp, err := l.spec()
		if err != nil {
			return nil, fmt.Errorf("layers[%d]: %w", i, err)
		}
		out[i] = sp
	}
	return out, nil
}

// plan validates the spec for the data's shape and describes the net.
func (s *CNNSpec) plan(features, classes int) (nn.Shape, []nn.Spec, nn.Info, error) {
	in, err := s.shape(features)
	if err != nil {
		return in, nil, nn.Info{}, err
	}
	ls, err := s.layers(in, classes)
	if err != nil {
		return in, nil, nn.Info{}, err
	}
	info, err := nn.Plan(in, ls, classes)
	return in, ls, info, err
}

// Validate implements Architecture.
func (s *CNNSpec) Validate(features, classes int) error {
	if err := nonNegativeRate("l2", s.L2); err != nil {
		return err
	}
	_, _, _, err := s.plan(features, classes)
	return err
}

// Dim implements Architecture.
func (s *CNNSpec) Dim(features, classes int) int64 {
	_, _, info, err := s.plan(features, classes)
	if err != nil {
		return 0
	}
	return int64(info.Params)
}

// Cost implements Coster.
func (s *CNNSpec) Cost(features, classes, batch int) Cost {
	in, ls, info, err := s.plan(features, classes)
	if err != nil {
		return Cost{}
	}
	info32, err := nn.PlanOf[float32](in, ls, classes)
	if err != nil {
		return Cost{}
	}
	n := min(batch, batchChunk)
	return Cost{ForwardFlops: float64(info.FLOPs), Workspace: info.Memory(n), Workspace32: info32.Memory(n)}
}

// Net implements Architecture.
func (s *CNNSpec) Net(features, classes int) NetSpec {
	in, ls, _, err := s.plan(features, classes)
	if err != nil {
		panic(fmt.Sprintf("models: CNNSpec.Net on an invalid spec: %v", err))
	}
	return NetSpec{in: in, layers: ls, features: features, classes: classes, l2: s.L2}
}

// Cost is what one example costs a model beyond its parameter count, for
// resource estimates.
type Cost struct {
	ForwardFlops float64 // floating-point operations of one example's forward pass
	Workspace    int64   // bytes of activations and workspaces a model value keeps, in float64
	Workspace32  int64   // the same in float32
}

// WorkspaceOf returns c's workspace bytes for a model computing in F.
func WorkspaceOf[F Float](c Cost) int64 {
	if vec.Is64[F]() {
		return c.Workspace
	}
	return c.Workspace32
}

// Coster is implemented by architectures whose work per example is not
// proportional to their parameters (a convolution reuses its weights at
// every position). Estimates use 2·Dim flops per forward pass and no
// workspace for the others.
type Coster interface {
	Cost(features, classes, batch int) Cost
}
