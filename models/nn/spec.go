package nn

import (
	"errors"
	"fmt"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// Shape is the shape of one sample's activation: C planes (channels) of
// H × W values, stored channel after channel, row after row (one sample of
// PyTorch's NCHW layout). A dense layer's output has shape (outputs, 1, 1).
type Shape struct {
	C, H, W int
}

// Size returns C·H·W, the number of floats of one sample.
func (s Shape) Size() int { return s.C * s.H * s.W }

// String returns "C×H×W".
func (s Shape) String() string { return fmt.Sprintf("%d×%d×%d", s.C, s.H, s.W) }

// Kind names a layer type.
type Kind int

// The layer types.
const (
	// KindConv2D is a 2-D convolution (cross-correlation, as PyTorch's
	// Conv2d) with zero padding; parameters: weight [Out][C][KH][KW], bias [Out].
	KindConv2D Kind = iota + 1
	// KindMaxPool2D takes the maximum of each KH × KW window; ties go to the
	// first element of the window in row-major order.
	KindMaxPool2D
	// KindAvgPool2D takes the mean of each KH × KW window.
	KindAvgPool2D
	// KindReLU is max(v, 0) elementwise, with derivative 0 at v = 0.
	KindReLU
	// KindTanh is tanh elementwise.
	KindTanh
	// KindSoftplus is log(1 + eᵛ) elementwise.
	KindSoftplus
	// KindFlatten reshapes C × H × W to C·H·W × 1 × 1; the values do not move.
	KindFlatten
	// KindDense is an affine map of the flattened input; parameters: weight
	// [Out][C·H·W], bias [Out].
	KindDense
	// KindGroupNorm normalizes each sample's groups of channels to mean 0 and
	// variance 1 (over the group's channels and positions, ε = 1e-5) and
	// then applies a per-channel scale and shift; parameters: scale [C],
	// shift [C], initialized to 1 and 0 (PyTorch's GroupNorm).
	KindGroupNorm
)

var kindNames = map[Kind]string{
	KindConv2D: "conv2d", KindMaxPool2D: "maxpool2d", KindAvgPool2D: "avgpool2d",
	KindReLU: "relu", KindTanh: "tanh", KindSoftplus: "softplus", KindFlatten: "flatten",
	KindDense: "dense", KindGroupNorm: "groupnorm",
}

// String returns the kind's lower-case name, as "conv2d".
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Spec describes one layer. Build it with the constructors (Conv2D, Dense,
// ...) or fill it in directly; New and Plan validate it.
type Spec struct {
	Kind Kind
	// Out is the number of output channels of a convolution, the number of
	// outputs of a dense layer and the number of groups of a group norm.
	Out int
	// KH and KW are the kernel (window) height and width of a convolution
	// or a pool.
	KH, KW int
	// Stride of a convolution or pool in both directions; 0 means PyTorch's
	// default: 1 for a convolution, the window size for a pool (which then
	// needs KH = KW).
	Stride int
	// Pad is a convolution's zero padding on every side; it must be smaller
	// than the kernel (a window entirely in the padding would see nothing).
	Pad int
	// RowOrder makes a dense layer sum its tangent terms in the order of a
	// loop over the samples, one at a time: R{Y} = (X·Uᵀ + u_b) + R{X}·Wᵀ,
	// R{gW} taking sample b's R{gY}_bᵀX_b and then gY_bᵀR{X}_b before
	// sample b+1's, and R{gX} taking gY_j·U_j and then R{gY}_j·W_j before
	// output j+1's. The values are the same as without it up to rounding;
	// the order is that of the softmax, logistic and tanh-MLP presets'
	// recorded runs. Only dense layers take it.
	RowOrder bool
}

// Conv2D returns the Spec of a convolution with out channels, a k × k
// kernel, the given stride and zero padding.
func Conv2D(out, k, stride, pad int) Spec {
	return Spec{Kind: KindConv2D, Out: out, KH: k, KW: k, Stride: stride, Pad: pad}
}

// MaxPool2D returns the Spec of a k × k max pool with the given stride.
func MaxPool2D(k, stride int) Spec { return Spec{Kind: KindMaxPool2D, KH: k, KW: k, Stride: stride} }

// AvgPool2D returns the Spec of a k × k average pool with the given stride.
func AvgPool2D(k, stride int) Spec { return Spec{Kind: KindAvgPool2D, KH: k, KW: k, Stride: stride} }

// ReLU returns the Spec of a ReLU.
func ReLU() Spec { return Spec{Kind: KindReLU} }

// Tanh returns the Spec of a tanh.
func Tanh() Spec { return Spec{Kind: KindTanh} }

// Softplus returns the Spec of a softplus.
func Softplus() Spec { return Spec{Kind: KindSoftplus} }

// Flatten returns the Spec of a flatten.
func Flatten() Spec { return Spec{Kind: KindFlatten} }

// Dense returns the Spec of a dense (fully connected) layer with out outputs.
func Dense(out int) Spec { return Spec{Kind: KindDense, Out: out} }

// DenseRowOrder returns the Spec of a dense layer with out outputs whose
// tangent sums run in the order of a loop over the samples (Spec.RowOrder).
func DenseRowOrder(out int) Spec { return Spec{Kind: KindDense, Out: out, RowOrder: true} }

// GroupNorm returns the Spec of a group normalization with the given number
// of groups (1: layer norm over C×H×W; C: instance norm over H×W).
func GroupNorm(groups int) Spec { return Spec{Kind: KindGroupNorm, Out: groups} }

// MaxParams bounds the number of parameters of a Net (2²⁷ values, 1 GiB
// in float64); MaxActivation bounds the values of one sample's activation
// at any layer.
const (
	MaxParams     = 1 << 27
	MaxActivation = 1 << 24
)

// Info describes a network without building it.
type Info struct {
	// Params is the length of the flat parameter vector.
	Params int
	// FLOPs is the forward pass's floating-point operations per sample,
	// counting the multiply and the add of every multiply-add of the
	// convolutions and dense layers (elementwise layers, pools and norms
	// add a few percent and are not counted). A gradient costs about three
	// times this, a Hessian-vector product about eight.
	FLOPs int64
	// Shapes are the output shapes of the layers.
	Shapes []Shape
	// Offsets locate each layer's parameters in the flat vector: layer i's
	// are x[Offsets[i]:Offsets[i+1]], weight first (len(Offsets) is the
	// number of layers plus one).
	Offsets []int

	in      Shape
	classes int
	// layers and their output shapes in the order they are computed, which
	// differs from the Specs' where a ReLU is moved after a max pool (see
	// poolBeforeReLU); the layers are those of the element type the Info
	// was planned for, whose size elem is.
	layers []sizer
	shapes []Shape
	elem   int64
}

// Memory returns the bytes a Net holds after a batch of n samples:
// activations and their tangents, gradient buffers and the layers'
// workspaces (not the caller's parameters, inputs and outputs), at the
// element size of the Net the Info describes (float64 for Plan's).
func (in Info) Memory(n int) int64 {
	var acts, inner int64
	for i, s := range in.shapes {
		acts += int64(s.Size())
		if i+1 < len(in.shapes) {
			inner += int64(s.Size())
		}
	}
	rg := in.rgSizes()
	// Activations and their tangents, the gradients of the inner
	// activations, two tangent-gradient buffers and six n × classes
	// buffers (the last VJP's G and the cross-entropy's scratch).
	floats := int64(n) * (2*acts + inner + int64(rg[0]+rg[1]) + 6*int64(in.classes))
	var work int64
	for _, l := range in.layers {
		work += l.memory(n)
	}
	return in.elem*floats + work
}

// rgSizes returns the floats per sample of the two buffers VJPR
// alternates R{gx} between: layer i ≥ 1 writes its R{gx} into buffer
// i&1, so each is sized to the largest input among its layers rather than
// both to the largest input of all — usually a first convolution's
// output, 44 MB at batch 128 in fedbio-4conv, which then sizes only one.
func (in Info) rgSizes() [2]int {
	var size [2]int
	for i := 1; i < len(in.shapes); i++ {
		size[i&1] = max(size[i&1], in.shapes[i-1].Size())
	}
	return size
}

// Plan validates a layer stack on input shape in and returns its Info. The
// last layer must output exactly classes values (C·H·W = classes): the
// stack ends with the classifier layer, usually Dense(classes); Plan does
// not append one.
func Plan(in Shape, layers []Spec, classes int) (Info, error) {
	info, _, err := plan[float64](in, layers, classes)
	return info, err
}

// PlanOf is Plan for a Net[F]: the same validation and Info, with
// Info.Memory counting elements of F.
func PlanOf[F gemm.Float](in Shape, layers []Spec, classes int) (Info, error) {
	info, _, err := plan[F](in, layers, classes)
	return info, err
}

// plan is Plan that also returns the layers of a Net[F], in the order
// they are computed, without workspaces.
func plan[F gemm.Float](in Shape, specs []Spec, classes int) (Info, []layer[F], error) {
	if in.C < 1 || in.H < 1 || in.W < 1 {
		return Info{}, nil, fmt.Errorf("nn: input shape %v: sizes must be positive", in)
	}
	if in.Size() > MaxActivation {
		return Info{}, nil, fmt.Errorf("nn: input shape %v has more than %d values", in, MaxActivation)
	}
	if classes < 1 {
		return Info{}, nil, fmt.Errorf("nn: %d classes: need at least 1", classes)
	}
	if len(specs) == 0 {
		return Info{}, nil, errors.New("nn: no layers")
	}
	info := Info{in: in, classes: classes, Offsets: []int{0}, elem: vec.ElemSize[F]()}
	var layers []layer[F]
	s := in
	for i, sp := range specs {
		l, err := newLayer[F](sp, s)
		if err != nil {
			return Info{}, nil, fmt.Errorf("nn: layer %d (%v) on input %v: %w", i, sp.Kind, s, err)
		}
		s = l.out()
		if s.Size() > MaxActivation {
			return Info{}, nil, fmt.Errorf("nn: layer %d (%v) outputs %v, more than %d values", i, sp.Kind, s, MaxActivation)
		}
		info.Params += l.params()
		if info.Params > MaxParams {
			return Info{}, nil, fmt.Errorf("nn: more than %d parameters at layer %d (%v)", MaxParams, i, sp.Kind)
		}
		info.FLOPs += l.flops()
		info.Shapes = append(info.Shapes, s)
		info.Offsets = append(info.Offsets, info.Params)
		layers = append(layers, l)
	}
	info.shapes = append([]Shape(nil), info.Shapes...)
	if s.Size() != classes {
		return Info{}, nil, fmt.Errorf("nn: the last layer outputs %v = %d values, want %d classes (end the stack with Dense(%d))",
			s, s.Size(), classes, classes)
	}
	poolBeforeReLU(layers, info.shapes)
	markFusions(layers)
	for _, l := range layers {
		info.layers = append(info.layers, l)
	}
	return info, layers, nil
}

// poolBeforeReLU swaps each ReLU directly followed by a max pool: max
// pooling commutes with the ReLU (which is nondecreasing), so the outputs
// are the same, and so are all derivatives — a window whose maximum is
// positive selects the same element either way, one whose maximum is not
// positive passes no gradient either way — while the ReLU then touches one
// value per window instead of all of them. shapes are the layers' output
// shapes.
func poolBeforeReLU[F gemm.Float](layers []layer[F], shapes []Shape) {
	for i := 0; i+1 < len(layers); i++ {
		if _, ok := layers[i].(*relu[F]); !ok {
			continue
		}
		p, ok := layers[i+1].(*pool[F])
		if !ok || !p.max {
			continue
		}
		// The pool was built for the ReLU's output, which has the ReLU's
		// input shape.
		layers[i], layers[i+1] = p, &relu[F]{elementwise[F]{p.o}}
		shapes[i] = p.o
		i++
	}
}

// newLayer validates sp on input shape in and returns the layer, without
// workspaces.
func newLayer[F gemm.Float](sp Spec, in Shape) (layer[F], error) {
	if sp.RowOrder && sp.Kind != KindDense {
		return nil, errors.New("only a dense layer takes RowOrder")
	}
	switch sp.Kind {
	case KindConv2D:
		return newConv[F](sp, in)
	case KindMaxPool2D, KindAvgPool2D:
		return newPool[F](sp, in)
	case KindReLU:
		return &relu[F]{elementwise[F]{in}}, nil
	case KindTanh:
		return &tanhLayer[F]{elementwise[F]{in}}, nil
	case KindSoftplus:
		return &softplus[F]{elementwise[F]{in}}, nil
	case KindFlatten:
		return &flatten[F]{in: in}, nil
	case KindDense:
		return newDense[F](sp, in)
	case KindGroupNorm:
		return newGroupNorm[F](sp, in)
	}
	return nil, fmt.Errorf("unknown layer kind %d", int(sp.Kind))
}

// window validates a kernel (window) of kh × kw with stride and padding on
// an h × w plane and returns the output plane size.
func window(kh, kw, stride, pad, h, w int) (ho, wo int, err error) {
	switch {
	case kh < 1 || kw < 1:
		return 0, 0, fmt.Errorf("kernel %d×%d: sizes must be positive", kh, kw)
	case stride < 1:
		return 0, 0, fmt.Errorf("stride %d: must be positive", stride)
	case pad < 0:
		return 0, 0, fmt.Errorf("padding %d: must not be negative", pad)
	case pad >= kh || pad >= kw:
		// PyTorch's limit too: a window entirely in the padding sees nothing.
		return 0, 0, fmt.Errorf("padding %d: must be smaller than the kernel %d×%d", pad, kh, kw)
	case kh > h+2*pad || kw > w+2*pad:
		return 0, 0, fmt.Errorf("kernel %d×%d larger than the padded input %d×%d", kh, kw, h+2*pad, w+2*pad)
	}
	return (h+2*pad-kh)/stride + 1, (w+2*pad-kw)/stride + 1, nil
}
