package nn

import (
	"fmt"
	"math/rand/v2"

	"hgpsim/internal/gemm"
)

// Net is a stack of layers mapping each sample of a batch to a vector of
// class logits, with flat parameters x (the layers' parameters in order,
// each weight then bias as PyTorch's parameters()), computing in F
// (float64 or float32; see the package doc for what stays float64).
//
// A Net keeps the activations of the last batch and workspaces sized for
// the largest batch seen: use it from one goroutine, and Clone it for
// others. The passes build on each other: Logits(x, A) first; JVP(x, u)
// after it; VJP(x, G) after Logits; VJPR(x, u, G, RG) after Logits and
// JVP(x, u). They must get the same x (and u), and A must not change in
// between: the Net keeps A, not a copy.
type Net[F gemm.Float] struct {
	info    Info
	layers  []layer[F] // in the order they are computed (Info.layers)
	specs   []Spec
	off     []int // parameter offsets of the layers, len(layers)+1
	cap     int   // batch the buffers hold
	n       int   // batch of the last Logits; 0 before any
	a       []F
	acts    [][]F // acts[i]: output of layer i
	racts   [][]F // racts[i]: R{output of layer i}
	jvpDone bool

	// gs[i] is the gradient of ⟨G, Z⟩ with respect to the output of layer
	// i (i < L−1) for the G in gTop, valid while gValid. They do not depend
	// on u: repeated VJPR calls at one x (one Hessian-vector product after
	// another) and a VJPR after VJP reuse them instead of backpropagating
	// G again. VJPR forms only those the passes read (gs[i] where
	// needGy[i+1]); VJP forms them all (those of fused group norms once
	// a VJPR asks, gsStale).
	gs     [][]F
	gTop   []F
	gValid bool
	// gPartial: VJPR formed gs only where needGy says, not all VJPRInput
	// reads.
	gPartial bool
	rg       [2][]F // R{gs}, alternating between layers: rg[i&1] holds layer i's R{gx}
	// needGy[i]: layer i's rbackward reads its gy, so VJPR must
	// backpropagate G down to layer i's output (see readsGy).
	// needGyIn is the same for VJPRInput, whose first layer also forms
	// R{gA} = Wᵀ·R{gy} + Uᵀ·gy and so reads its gy.
	needGy, needGyIn []bool
	// gsStale: VJP left out the output gradients of the group norms it
	// ran fused with their pools (fuse.go).
	gsStale bool

	z, p, rz, gz, rgz []F // cross-entropy scratch, n × classes
}

// New validates the layer stack as Plan does and returns a Net. The last
// layer must output exactly classes values (end the stack with
// Dense(classes)); New does not append it.
func New[F gemm.Float](in Shape, layers []Spec, classes int) (*Net[F], error) {
	info, ls, err := plan[F](in, layers, classes)
	if err != nil {
		return nil, err
	}
	net := &Net[F]{info: info, layers: ls, specs: append([]Spec(nil), layers...)}
	net.off = make([]int, len(ls)+1)
	for i, l := range ls {
		net.off[i+1] = net.off[i] + l.params()
	}
	net.acts = make([][]F, len(ls))
	net.racts = make([][]F, len(ls))
	net.gs = make([][]F, len(ls)-1)
	net.needGy = make([]bool, len(ls))
	net.needGyIn = make([]bool, len(ls))
	for i, l := range ls {
		net.needGy[i] = readsGy(l, i == 0) || i > 0 && net.needGy[i-1]
		net.needGyIn[i] = readsGy(l, false) || i > 0 && net.needGyIn[i-1]
	}
	return net, nil
}

// Dim returns the number of parameters.
func (net *Net[F]) Dim() int { return net.info.Params }

// Classes returns the number of logits per sample.
func (net *Net[F]) Classes() int { return net.info.classes }

// Input returns the shape of one input sample.
func (net *Net[F]) Input() Shape { return net.info.in }

// Info returns the net's description (parameters, FLOPs, shapes, memory).
func (net *Net[F]) Info() Info {
	info := net.info
	info.Shapes = append([]Shape(nil), info.Shapes...)
	info.Offsets = append([]int(nil), info.Offsets...)
	return info
}

// FLOPs returns the forward FLOPs per sample (see Info.FLOPs).
func (net *Net[F]) FLOPs() int64 { return net.info.FLOPs }

// Clone returns a Net with the same layers and its own workspaces.
func (net *Net[F]) Clone() *Net[F] {
	c, err := New[F](net.info.in, net.specs, net.info.classes)
	if err != nil {
		panic("nn: Clone of a valid Net failed: " + err.Error())
	}
	return c
}

// Init writes initial parameters into dst, layer by layer from r:
// convolution and dense weights and biases from U(−1/√fan_in, 1/√fan_in)
// with fan_in the inputs of one output (PyTorch's defaults:
// Kaiming-uniform with a = √5 for the weights), group-norm scales 1 and
// shifts 0. The draws are float64, rounded to F: a float32 net starts from
// the float64 net's parameters rounded.
func (net *Net[F]) Init(dst []F, r *rand.Rand) {
	net.checkParams("dst", dst)
	for i, l := range net.layers {
		l.init(dst[net.off[i]:net.off[i+1]], r)
	}
}

func (net *Net[F]) checkParams(name string, v []F) {
	if len(v) != net.info.Params {
		panic(fmt.Sprintf("nn: len(%s) = %d, want Dim() = %d", name, len(v), net.info.Params))
	}
}

func (net *Net[F]) checkBatch(name string, v []F, per int) {
	if len(v) != net.n*per {
		panic(fmt.Sprintf("nn: len(%s) = %d, want %d samples × %d", name, len(v), net.n, per))
	}
}

// reserve grows the buffers to a batch of n.
func (net *Net[F]) reserve(n int) {
	if n <= net.cap {
		return
	}
	for i, l := range net.layers {
		size := n * l.out().Size()
		net.acts[i] = make([]F, size)
		net.racts[i] = make([]F, size)
		if i < len(net.gs) {
			net.gs[i] = make([]F, size)
		}
		l.reserve(n)
	}
	for k, size := range net.info.rgSizes() {
		net.rg[k] = make([]F, n*size)
	}
	c := net.info.classes
	net.gTop = make([]F, n*c)
	net.z, net.p, net.rz = make([]F, n*c), make([]F, n*c), make([]F, n*c)
	net.gz, net.rgz = make([]F, n*c), make([]F, n*c)
	net.cap = n
}

// input returns the input of layer i and its tangent (nil for the first
// layer: the data do not depend on the parameters).
func (net *Net[F]) input(i int) (x, rx []F) {
	if i == 0 {
		return net.a, nil
	}
	return net.acts[i-1], net.racts[i-1]
}

// Logits writes into Z (n × classes) the logits of the n samples of A
// (each Input().Size() floats, flattened NCHW) at parameters x, and keeps
// the activations the other passes need.
func (net *Net[F]) Logits(Z, x, A []F, n int) {
	net.checkParams("x", x)
	if n < 1 {
		panic(fmt.Sprintf("nn: batch of %d samples", n))
	}
	if len(A) != n*net.info.in.Size() {
		panic(fmt.Sprintf("nn: len(A) = %d, want %d samples × %v", len(A), n, net.info.in))
	}
	net.reserve(n)
	net.n, net.a, net.jvpDone, net.gValid = n, A, false, false
	net.checkBatch("Z", Z, net.info.classes)
	net.gsStale = false
	for i := 0; i < len(net.layers); i++ {
		in, _ := net.input(i)
		w := x[net.off[i]:net.off[i+1]]
		if gn := net.fusedNorm(i); gn != nil {
			gn.forwardPooled(net.acts[i+1], in, w, 0, n)
			i++
			continue
		}
		if cv, ok := net.layers[i].(*conv[F]); ok && i+1 < len(net.layers) {
			if gn := net.fusedNorm(i + 1); gn != nil {
				net.forwardConvNorm(i, cv, gn, in, x, n)
				i += 2
				continue
			}
		}
		net.layers[i].forward(net.acts[i], in, w, n)
	}
	copy(Z, net.acts[len(net.acts)-1])
}

// Stateless reports whether JVP, VJP and VJPR need nothing of Logits but
// its input rows: a net of one dense layer, whose passes read only the
// input and the parameters. Such a net can replay a cached forward pass
// with Bind.
func (net *Net[F]) Stateless() bool {
	if len(net.layers) != 1 {
		return false
	}
	_, ok := net.layers[0].(*dense[F])
	return ok
}

// Bind records the n samples of A as the input of the last Logits without
// computing the logits; JVP, VJP and VJPR then act on them as after
// Logits. It panics unless the net is Stateless.
func (net *Net[F]) Bind(A []F, n int) {
	if !net.Stateless() {
		panic("nn: Bind on a net whose passes need its forward pass")
	}
	if n < 1 || len(A) != n*net.info.in.Size() {
		panic(fmt.Sprintf("nn: Bind of %d values as %d samples × %v", len(A), n, net.info.in))
	}
	net.reserve(n)
	net.n, net.a, net.jvpDone, net.gValid = n, A, false, false
}

func (net *Net[F]) needLogits(what string) {
	if net.n == 0 {
		panic("nn: " + what + " before Logits")
	}
}

// JVP writes V = (∂Z/∂x)·u (n × classes), the derivative of the last
// Logits along u, and keeps the tangents VJPR needs.
func (net *Net[F]) JVP(V, x, u []F) {
	net.needLogits("JVP")
	net.checkParams("x", x)
	net.checkParams("u", u)
	net.checkBatch("V", V, net.info.classes)
	n := net.n
	for i, l := range net.layers {
		in, rin := net.input(i)
		w, ui := x[net.off[i]:net.off[i+1]], u[net.off[i]:net.off[i+1]]
		l.rforward(net.racts[i], rin, in, net.acts[i], w, ui, n)
	}
	net.jvpDone = true
	copy(V, net.racts[len(net.racts)-1])
}

// VJP adds Σ_b J_bᵀG_b to dst, J_b = ∂Z_b/∂x the Jacobian of sample b's
// logits at the last Logits and G (n × classes) the weights of the logits.
func (net *Net[F]) VJP(dst, x, G []F) { net.vjp(dst, nil, x, G) }

// VJPInput is VJP that also writes into gA (n × Input().Size()) the
// gradient of Σ_b ⟨G_b, Z_b⟩ with respect to the inputs A of the last
// Logits: what a net fed by another net's outputs passes back to it.
func (net *Net[F]) VJPInput(dst, gA, x, G []F) {
	net.needLogits("VJPInput")
	net.checkBatch("gA", gA, net.info.in.Size())
	net.vjp(dst, gA, x, G)
}

func (net *Net[F]) vjp(dst, gA, x, G []F) {
	net.needLogits("VJP")
	net.checkParams("dst", dst)
	net.checkParams("x", x)
	net.checkBatch("G", G, net.info.classes)
	n := net.n
	gy := G
	net.gsStale = false
	for i := len(net.layers) - 1; i >= 0; i-- {
		l := net.layers[i]
		in, _ := net.input(i)
		gx := gA
		if i > 0 {
			gx = net.gs[i-1][:n*net.inSize(i)]
		}
		if gn := net.fusedNorm(i - 1); gn != nil {
			// The pool (i) and its norm: gx is the buffer of the
			// norm's output gradient.
			gxn, in := gA, net.a
			if i > 1 {
				gxn, in = net.gs[i-2][:n*net.inSize(i-1)], net.acts[i-2]
			}
			if cv, ok := net.layers[max(i-2, 0)].(*conv[F]); ok && i >= 2 {
				// And the convolution before them.
				gxc := gA
				if i > 2 {
					gxc = net.gs[i-3][:n*net.inSize(i-2)]
				}
				net.backwardConvNorm(i-2, cv, gn, gxc, dst, gy, x)
				net.gsStale = true
				gy = gxc
				i -= 2
				continue
			}
			lo, hi := net.off[i-1], net.off[i]
			gn.backwardPooled(gxn, dst[lo:hi], gy, in, x[lo:hi], gx, 0, n)
			net.gsStale = true
			gy = gxn
			i--
			continue
		}
		l.backward(gx, dst[net.off[i]:net.off[i+1]], gy, in, net.acts[i], x[net.off[i]:net.off[i+1]], n)
		gy = gx
	}
	copy(net.gTop, G)
	net.gValid, net.gPartial = true, false
}

// VJPR adds Σ_b [J_bᵀRG_b + Σ_j G_bj ∇²Z_bj·u] to dst: the derivative of
// VJP(dst, x, G) along x → x + t·u, G → G + t·RG. It needs Logits and then
// JVP(u) of the same x.
//
// The backpropagation of G itself does not depend on u: when VJP or VJPR
// ran with the same G (bit for bit) since the last Logits, VJPR reuses it,
// which saves one matrix product per layer — so Hessian-vector products
// at one point along many directions should call Logits once and then
// JVP(u) and VJPR(u, …) per direction.
func (net *Net[F]) VJPR(dst, x, u, G, RG []F) { net.vjpr(dst, nil, x, u, G, RG) }

// VJPRInput is VJPR that also writes into rgA (n × Input().Size()) the
// derivative along u (and RG) of the input gradient gA of VJPInput, the
// inputs A held fixed: for a net fed by another net's outputs, the
// gradient with respect to those outputs of Σ_b ⟨G_b, ∂Z_b/∂x·u⟩ when
// G_b = ∂ℓ_b/∂Z_b and RG its derivative along u.
func (net *Net[F]) VJPRInput(dst, rgA, x, u, G, RG []F) {
	net.needLogits("VJPRInput")
	net.checkBatch("rgA", rgA, net.info.in.Size())
	net.vjpr(dst, rgA, x, u, G, RG)
}

func (net *Net[F]) vjpr(dst, rgA, x, u, G, RG []F) {
	net.needLogits("VJPR")
	if !net.jvpDone {
		panic("nn: VJPR before JVP")
	}
	net.checkParams("dst", dst)
	net.checkParams("x", x)
	net.checkParams("u", u)
	net.checkBatch("G", G, net.info.classes)
	net.checkBatch("RG", RG, net.info.classes)
	n := net.n
	reuse := net.gValid && !(rgA != nil && net.gPartial) && sameBits(G, net.gTop[:len(G)])
	if reuse && net.gsStale {
		net.formNormGrads()
	}
	need := net.needGy
	if rgA != nil {
		need = net.needGyIn
	}
	gy, rgy := G, RG
	for i := len(net.layers) - 1; i >= 0; i-- {
		l := net.layers[i]
		in, rin := net.input(i)
		var gx []F
		rgx := rgA
		if i > 0 {
			rgx = net.rg[i&1][:n*net.inSize(i)]
			if !reuse && need[i-1] {
				gx = net.gs[i-1][:n*net.inSize(i)]
			}
		}
		lo, hi := net.off[i], net.off[i+1]
		l.rbackward(gx, rgx, dst[lo:hi], gy, rgy, in, rin, net.acts[i], net.racts[i], x[lo:hi], u[lo:hi], n)
		if i > 0 {
			gy, rgy = net.gs[i-1][:n*net.inSize(i)], rgx
		}
	}
	if !reuse {
		copy(net.gTop, G)
		net.gValid, net.gPartial, net.gsStale = true, rgA == nil, false
	}
}

// readsGy reports whether l's rbackward reads gy for anything but its gx
// (first: l is the first layer, whose input has no tangent). The layers
// that are linear given their masks (ReLU, pools, flatten) form R{gx} from
// rgy alone, and a weighted layer on the data needs gy only with R{x}: so
// in a net that starts conv, ReLU, pool, conv, … VJPR need not
// backpropagate G below the second convolution, which saves that
// convolution's input-gradient product (an eighth of the HVP's products).
func readsGy[F gemm.Float](l layer[F], first bool) bool {
	switch l.(type) {
	case *relu[F], *pool[F], *flatten[F]:
		return false
	case *conv[F], *dense[F]:
		return !first
	}
	return true
}

// inSize returns the floats per sample of layer i's input.
func (net *Net[F]) inSize(i int) int {
	if i == 0 {
		return net.info.in.Size()
	}
	return net.info.shapes[i-1].Size()
}
