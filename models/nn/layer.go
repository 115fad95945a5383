package nn

import (
	"math"
	"math/rand/v2"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// layer is one layer over a batch of n samples. Batches are flat: sample b
// of an activation of shape s is v[b·s.Size() : (b+1)·s.Size()]. x is the
// layer's input, y its output, w its parameters (a slice of the net's flat
// parameters, empty for layers without any) and u the same slice of the
// tangent direction. gy = ∂/∂y of the backpropagated quantity, gx = ∂/∂x,
// gw = ∂/∂w; r-prefixed slices are R{·}, the derivatives of the unprefixed
// quantity along u (Pearlmutter's R-operator).
//
// Every method reads only its arguments and the workspace filled by the
// methods it documents as its prerequisites; none allocates once reserve
// has run for the batch size. Gradients of parameters (gw, rgw) are added
// to; activations and input gradients (y, ry, gx, rgx) are overwritten.
type layer[F gemm.Float] interface {
	sizer
	// reserve grows the workspaces to hold a batch of n samples.
	reserve(n int)
	// init draws initial parameters into w.
	init(w []F, r *rand.Rand)

	// forward writes y = f(x; w). It may keep what the other passes need.
	forward(y, x, w []F, n int)
	// backward writes gx = (∂y/∂x)ᵀgy unless gx is nil and adds
	// (∂y/∂w)ᵀgy to gw. It needs forward of the same x.
	backward(gx, gw, gy, x, y, w []F, n int)
	// rforward writes ry = (∂y/∂x)·rx + (∂y/∂w)·u; rx nil means 0 (x does
	// not depend on the parameters). It needs forward of the same x and may
	// keep what rbackward needs.
	rforward(ry, rx, x, y, w, u []F, n int)
	// rbackward is backward differentiated along u: it writes gx as
	// backward does and rgx = R{gx} (unless they are nil) and adds R{gw} to
	// rgw, for gy changing at the rate rgy. It needs rforward of the same
	// x, rx and u.
	rbackward(gx, rgx, rgw, gy, rgy, x, rx, y, ry, w, u []F, n int)
}

// sizer is what Plan and Info need of a layer, whatever its element type.
type sizer interface {
	out() Shape
	params() int
	flops() int64
	// memory returns the bytes of workspace the layer keeps for batch n.
	memory(n int) int64
}

// elementwise holds what the parameter-free elementwise layers share.
type elementwise[F gemm.Float] struct{ shape Shape }

func (e *elementwise[F]) out() Shape           { return e.shape }
func (e *elementwise[F]) params() int          { return 0 }
func (e *elementwise[F]) flops() int64         { return 0 }
func (e *elementwise[F]) memory(int) int64     { return 0 }
func (e *elementwise[F]) reserve(int)          {}
func (e *elementwise[F]) init([]F, *rand.Rand) {}

// relu is max(x, 0). It is linear on each side of 0, so its second
// derivative vanishes wherever it exists and every pass routes through the
// same mask x > 0, read off the output y > 0 (derivative 0 at x = 0, as
// PyTorch).
type relu[F gemm.Float] struct{ elementwise[F] }

func (l *relu[F]) forward(y, x, _ []F, n int) {
	y = y[:n*l.shape.Size()]
	x = x[:len(y)]
	if patchVector && !vec.Is64[F]() && len(y) >= 8 {
		relu32(ptr32(y), ptr32(x), len(y))
		k := len(y) &^ 7
		y, x = y[k:], x[k:]
	}
	if patchVector && vec.Is64[F]() && len(y) >= 4 {
		relu64(ptr64(y), ptr64(x), len(y))
		k := len(y) &^ 3
		y, x = y[k:], x[k:]
	}
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

// reluMask writes dst = src where the ReLU output y is positive and 0
// where it is 0. It selects with a bit mask rather than a branch: the signs
// of activations are close to random, so a branch would be mispredicted
// half the time. y ≥ 0 (never −0: max(−0, 0) = +0), so y > 0 exactly when
// its bits are nonzero, and 0 − bits has its sign bit set exactly then.
func reluMask[F gemm.Float](dst, src, y []F) {
	if !vec.Is64[F]() {
		reluMask32(vec.View[float32](dst), vec.View[float32](src), vec.View[float32](y))
		return
	}
	reluMask64(vec.View[float64](dst), vec.View[float64](src), vec.View[float64](y))
}

func reluMask64(dst, src, y []float64) {
	src = src[:len(dst)]
	y = y[:len(dst)]
	if patchVector && len(dst) >= 4 {
		reluMaskVec64(&dst[0], &src[0], &y[0], len(dst))
		k := len(dst) &^ 3
		dst, src, y = dst[k:], src[k:], y[k:]
	}
	for i, v := range y {
		keep := uint64(-int64(math.Float64bits(v)) >> 63)
		dst[i] = math.Float64frombits(math.Float64bits(src[i]) & keep)
	}
}

func reluMask32(dst, src, y []float32) {
	src = src[:len(dst)]
	y = y[:len(dst)]
	if patchVector && len(dst) >= 8 {
		reluMaskVec32(&dst[0], &src[0], &y[0], len(dst))
		k := len(dst) &^ 7
		dst, src, y = dst[k:], src[k:], y[k:]
	}
	for i, v := range y {
		keep := uint32(-int32(math.Float32bits(v)) >> 31)
		dst[i] = math.Float32frombits(math.Float32bits(src[i]) & keep)
	}
}

func (l *relu[F]) backward(gx, _, gy, _, y, _ []F, n int) {
	if gx != nil {
		reluMask(gx[:n*l.shape.Size()], gy, y)
	}
}

func (l *relu[F]) rforward(ry, rx, _, y, _, _ []F, n int) {
	ry = ry[:n*l.shape.Size()]
	if rx == nil {
		clear(ry)
		return
	}
	reluMask(ry, rx, y)
}

func (l *relu[F]) rbackward(gx, rgx, _, gy, rgy, _, _, y, _, _, _ []F, n int) {
	l.backward(gx, nil, gy, nil, y, nil, n)
	if rgx != nil {
		reluMask(rgx[:n*l.shape.Size()], rgy, y)
	}
}

// tanhLayer is tanh, with f' = 1 − y² and f” = −2y(1 − y²).
type tanhLayer[F gemm.Float] struct{ elementwise[F] }

func (l *tanhLayer[F]) forward(y, x, _ []F, n int) {
	y = y[:n*l.shape.Size()]
	x = x[:len(y)]
	if vec.Is64[F]() {
		vec.Tanh(vec.View[float64](y), vec.View[float64](x)) // math.Tanh's bits, several lanes at a time
		return
	}
	for i, v := range x {
		y[i] = F(math.Tanh(float64(v)))
	}
}

func (l *tanhLayer[F]) backward(gx, _, gy, _, y, _ []F, n int) {
	if gx == nil {
		return
	}
	gx = gx[:n*l.shape.Size()]
	gy, y = gy[:len(gx)], y[:len(gx)]
	for i, v := range y {
		gx[i] = gy[i] * (1 - v*v)
	}
}

func (l *tanhLayer[F]) rforward(ry, rx, _, y, _, _ []F, n int) {
	ry = ry[:n*l.shape.Size()]
	if rx == nil {
		clear(ry)
		return
	}
	rx, y = rx[:len(ry)], y[:len(ry)]
	for i, v := range y {
		ry[i] = rx[i] * (1 - v*v)
	}
}

// rbackward: R{gx} = (1 − y²)·rgy + f”(x)·rx·gy = (1 − y²)·rgy − 2y·gy·ry,
// since ry = (1 − y²)·rx.
func (l *tanhLayer[F]) rbackward(gx, rgx, _, gy, rgy, _, _, y, ry, _, _ []F, n int) {
	l.backward(gx, nil, gy, nil, y, nil, n)
	if rgx == nil {
		return
	}
	rgx = rgx[:n*l.shape.Size()]
	gy, rgy, y, ry = gy[:len(rgx)], rgy[:len(rgx)], y[:len(rgx)], ry[:len(rgx)]
	for i, v := range y {
		rgx[i] = (1-v*v)*rgy[i] - 2*v*gy[i]*ry[i]
	}
}

// softplus is log(1 + eˣ), with f' = σ(x) = 1 − e^(−y) and
// f” = σ(x)(1 − σ(x)).
type softplus[F gemm.Float] struct{ elementwise[F] }

func (l *softplus[F]) forward(y, x, _ []F, n int) {
	y = y[:n*l.shape.Size()]
	x = x[:len(y)]
	for i, v := range x {
		// max(v, 0) + log1p(e^(−|v|)) neither overflows nor loses e^v ≪ 1.
		y[i] = max(v, 0) + F(math.Log1p(math.Exp(-math.Abs(float64(v)))))
	}
}

// sigmoid returns σ(x) = 1/(1 + e^(−x)) without overflow, computed in
// float64 and rounded to F.
func sigmoid[F gemm.Float](v F) F {
	x := float64(v)
	if x >= 0 {
		return F(1 / (1 + math.Exp(-x)))
	}
	e := math.Exp(x)
	return F(e / (1 + e))
}

func (l *softplus[F]) backward(gx, _, gy, x, _, _ []F, n int) {
	if gx == nil {
		return
	}
	gx = gx[:n*l.shape.Size()]
	gy, x = gy[:len(gx)], x[:len(gx)]
	for i, v := range x {
		gx[i] = gy[i] * sigmoid(v)
	}
}

func (l *softplus[F]) rforward(ry, rx, x, _, _, _ []F, n int) {
	ry = ry[:n*l.shape.Size()]
	if rx == nil {
		clear(ry)
		return
	}
	rx, x = rx[:len(ry)], x[:len(ry)]
	for i, v := range x {
		ry[i] = rx[i] * sigmoid(v)
	}
}

func (l *softplus[F]) rbackward(gx, rgx, _, gy, rgy, x, rx, _, _, _, _ []F, n int) {
	l.backward(gx, nil, gy, x, nil, nil, n)
	if rgx == nil {
		return
	}
	rgx = rgx[:n*l.shape.Size()]
	gy, rgy, x = gy[:len(rgx)], rgy[:len(rgx)], x[:len(rgx)]
	if rx == nil {
		for i, v := range x {
			rgx[i] = sigmoid(v) * rgy[i]
		}
		return
	}
	rx = rx[:len(rgx)]
	for i, v := range x {
		s := sigmoid(v)
		rgx[i] = s*rgy[i] + s*(1-s)*gy[i]*rx[i]
	}
}

// flatten copies: the values of a sample are already in C·H·W order, and
// a copy keeps every layer's output in its own buffer, which the net's
// bookkeeping relies on; it costs one pass over a small activation.
type flatten[F gemm.Float] struct{ in Shape }

func (l *flatten[F]) out() Shape           { return Shape{l.in.Size(), 1, 1} }
func (l *flatten[F]) params() int          { return 0 }
func (l *flatten[F]) flops() int64         { return 0 }
func (l *flatten[F]) memory(int) int64     { return 0 }
func (l *flatten[F]) reserve(int)          {}
func (l *flatten[F]) init([]F, *rand.Rand) {}

func (l *flatten[F]) forward(y, x, _ []F, n int) { copy(y[:n*l.in.Size()], x) }

func (l *flatten[F]) backward(gx, _, gy, _, _, _ []F, n int) {
	if gx != nil {
		copy(gx[:n*l.in.Size()], gy)
	}
}

func (l *flatten[F]) rforward(ry, rx, _, _, _, _ []F, n int) {
	if rx == nil {
		clear(ry[:n*l.in.Size()])
		return
	}
	copy(ry[:n*l.in.Size()], rx)
}

func (l *flatten[F]) rbackward(gx, rgx, _, gy, rgy, _, _, _, _, _, _ []F, n int) {
	l.backward(gx, nil, gy, nil, nil, nil, n)
	if rgx != nil {
		copy(rgx[:n*l.in.Size()], rgy)
	}
}
