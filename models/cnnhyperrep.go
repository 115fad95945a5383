package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"hgpsim/datasets"
	"hgpsim/internal/vec"
	"hgpsim/models/nn"
)

// CNNHyperRep is the federated hyper-representation problem on a
// convolutional net of package nn, as FBO-AggITD's CIFAR-10 experiment
// (App. A.2) sets it on LeNet: the net's layer stack is cut before its last
// k parameterised layers, which must be dense,
//
//	body  a → h = B(a; λ)  (the convolutions and everything up to the cut),
//	tail  h → z = T(h; x)  (the last k dense layers and the activations
//	                        between them),
//	g(x, λ) = mean_b CE(z_b, y_b) + (μ/2)‖x‖²   (InnerLoss, on train data),
//	f(x, λ) = mean_b CE(z_b, y_b)               (OuterGrad, on validation data),
//
// so λ is the head of the net's PyTorch-ordered parameter vector and x its
// tail. With the paper's k = 2 on LeNet (… dense 120, ReLU, dense 84,
// ReLU, dense C), h is the 120 ReLU outputs, x = (W₈₄, b₈₄, W_C, b_C) and λ
// everything before.
//
// μ (the cnn's l2) > 0 makes g strongly convex in x only for k = 1 (a
// softmax regression on h); for k = 2 the lower level is a small
// non-convex net, as in the paper. For fixed λ the features h of a row do
// not change, so CNNHyperRep caches them per dataset and row until λ
// changes (compared by value), as HyperRep does: InnerLoss, InnerGrad,
// InnerHVP and Accuracy then run only the tail. InnerCross and OuterGrad's
// ∂_λf run the body forward and backward on their batch.
//
// Every product is exact (nn's forward-over-reverse passes):
//
//	∇ₓg         tail VJP of G = (p − e_y)/n, plus μx;
//	∇²ₓₓg·u     tail VJPR along u with R{G} = (p ⊙ R{z} − p pᵀR{z})/n, plus μu;
//	(∂_λ∇ₓg)ᵀu  the body's VJP of ∂/∂h ⟨∇ₓg, u⟩, which is the tail's
//	            R{∂/∂h} along u (nn.Net.VJPRInput);
//	∂_λf        the body's VJP of the tail's ∂f/∂h (nn.Net.VJPInput).
//
// A *CNNHyperRep holds the nets' workspaces and the cache: one goroutine
// per value, Clone for others. Datasets must stay unchanged once used
// (they are read-only by contract), since the cache is keyed by their
// address.
type CNNHyperRep struct {
	body, tail *nn.Net
	in         nn.Shape
	bodyLayers []nn.Spec
	tailLayers []nn.Spec
	features   int // D = in.Size()
	feat       int // F, the floats of h
	classes    int
	mu         float64

	cache featureCaches // of the features h (F floats a row)

	// Per-chunk scratch.
	miss        []int
	a           []float64 // gathered rows
	hm          []float64 // the misses' features
	hb          []float64 // nb×F: the chunk's features h_b
	gh          []float64 // nb×F: a gradient in h
	z, v, g, rg []float64 // nb×C: logits (then probabilities), R{z}, G, R{G}
	discardTail []float64 // DimX: tail parameter gradients not asked for
}

// DefaultInnerLayers is the number of dense layers at the end of a cnn that
// form the inner variable when the hyper-representation head is not told:
// the last two, as FBO-AggITD's LeNet experiment.
const DefaultInnerLayers = 2

// hasParams reports whether a layer kind has parameters.
func hasParams(k nn.Kind) bool {
	return k == nn.KindConv2D || k == nn.KindDense || k == nn.KindGroupNorm
}

// SplitHyperRep cuts a layer stack before its last k parameterised layers,
// returning the body (λ) and the tail (x) and the floats of one sample's
// output of the body. It returns an error when the stack is invalid (see
// nn.Plan), k < 1, the tail holds a layer other than dense, relu, tanh,
// softplus or flatten, or no parameterised layer would remain in the body.
func SplitHyperRep(in nn.Shape, layers []nn.Spec, classes, k int) (body, tail []nn.Spec, features int, err error) {
	info, err := nn.Plan(in, layers, classes)
	if err != nil {
		return nil, nil, 0, err
	}
	if k < 1 {
		return nil, nil, 0, fmt.Errorf("inner_layers must be at least 1, got %d", k)
	}
	cut, seen, total := -1, 0, 0
	for i := len(layers) - 1; i >= 0; i-- {
		if !hasParams(layers[i].Kind) {
			continue
		}
		total++
		if seen < k {
			seen++
			cut = i
		}
	}
	if seen < k || total == k {
		return nil, nil, 0, fmt.Errorf("inner_layers %d: the net has %d parameterised layers, and at least one must remain in the body (the outer variable λ)", k, total)
	}
	for i, l := range layers[cut:] {
		switch l.Kind {
		case nn.KindDense, nn.KindReLU, nn.KindTanh, nn.KindSoftplus, nn.KindFlatten:
		default:
			return nil, nil, 0, fmt.Errorf("inner_layers %d: the inner variable x must be dense layers (with activations between them), and layer %d is %v", k, cut+i, l.Kind)
		}
	}
	return slices.Clone(layers[:cut]), slices.Clone(layers[cut:]), info.Shapes[cut-1].Size(), nil
}

// NewCNNHyperRep returns the hyper-representation problem on the net of
// the given layers on inputs of shape in, its last k parameterised layers
// being the inner variable x. It returns SplitHyperRep's errors; it panics
// on a negative or non-finite μ.
func NewCNNHyperRep(in nn.Shape, layers []nn.Spec, classes, k int, mu float64) (*CNNHyperRep, error) {
	checkL2("NewCNNHyperRep: mu", mu)
	bodyL, tailL, f, err := SplitHyperRep(in, layers, classes, k)
	if err != nil {
		return nil, err
	}
	return newCNNHyperRep(in, bodyL, tailL, f, classes, mu)
}

func newCNNHyperRep(in nn.Shape, bodyL, tailL []nn.Spec, f, classes int, mu float64) (*CNNHyperRep, error) {
	body, err := nn.New(in, bodyL, f)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	hs := nn.Shape{C: f, H: 1, W: 1}
	tail, err := nn.New(hs, tailL, classes)
	if err != nil {
		return nil, fmt.Errorf("tail: %w", err)
	}
	return &CNNHyperRep{body: body, tail: tail, in: in, bodyLayers: bodyL, tailLayers: tailL,
		features: in.Size(), feat: f, classes: classes, mu: mu}, nil
}

// DimX implements Bilevel: the tail's parameters.
func (m *CNNHyperRep) DimX() int { return m.tail.Dim() }

// DimLambda implements Bilevel: the body's parameters.
func (m *CNNHyperRep) DimLambda() int { return m.body.Dim() }

// Clone implements Bilevel: the same nets with their own workspaces and an
// empty cache.
func (m *CNNHyperRep) Clone() Bilevel {
	c, err := newCNNHyperRep(m.in, m.bodyLayers, m.tailLayers, m.feat, m.classes, m.mu)
	if err != nil {
		panic("models: Clone of a valid CNNHyperRep failed: " + err.Error())
	}
	return c
}

// Init implements Bilevel: the tail's layers drawn as PyTorch's defaults
// (see nn.Net.Init).
func (m *CNNHyperRep) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimX())
	m.tail.Init(dst, r)
}

// InitLambda implements LambdaInitializer: the body's layers drawn as
// PyTorch's defaults.
func (m *CNNHyperRep) InitLambda(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimLambda())
	m.body.Init(dst, r)
}

var (
	_ Bilevel           = (*CNNHyperRep)(nil)
	_ LambdaInitializer = (*CNNHyperRep)(nil)
)

func (m *CNNHyperRep) check(x, lambda []float64, d *datasets.Dataset) {
	checkArgs(m, x, lambda, d, m.features, m.classes)
}

// chunk leaves the features of the batch rows lo…hi−1 (positions in idx)
// in the rows of m.hb, checks their labels and returns nb = hi − lo. With
// full it runs the body on all the chunk's rows, so that a body VJP can
// follow; otherwise only on the rows the cache lacks. Either way the cache
// ends up holding every row of the chunk: a row's features do not depend
// on the other rows of its batch (nn computes each sample's outputs in a
// fixed order), so the cache holds the same bits whichever call filled it.
func (m *CNNHyperRep) chunk(c *featureCache, lambda []float64, d *datasets.Dataset, idx []int, lo, hi int, full bool) int {
	F, C := m.feat, m.classes
	nb := hi - lo
	for b := range nb {
		label(d, rowIndex(d, idx, lo+b), C)
	}
	m.hb = resize(m.hb, nb*F)
	if full {
		rows := batchRows(&m.a, d, idx, lo, hi)
		m.body.Logits(m.hb, lambda, rows, nb)
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			copy(c.h[i*F:(i+1)*F], m.hb[b*F:(b+1)*F])
			m.cache.mark(c, i)
		}
	} else {
		m.miss = m.cache.misses(m.miss[:0], c, d, idx, lo, hi)
		if nm := len(m.miss); nm > 0 {
			m.a = resize(m.a, nm*m.features)
			m.hm = resize(m.hm, nm*F)
			d.Gather(m.a, m.miss)
			m.body.Logits(m.hm, lambda, m.a, nm)
			for k, i := range m.miss {
				copy(c.h[i*F:(i+1)*F], m.hm[k*F:(k+1)*F])
			}
		}
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			copy(m.hb[b*F:(b+1)*F], c.h[i*F:(i+1)*F])
		}
	}
	for _, buf := range []*[]float64{&m.z, &m.v, &m.g, &m.rg} {
		*buf = resize(*buf, nb*C)
	}
	m.gh = resize(m.gh, nb*F)
	return nb
}

// logits runs the tail on the chunk's features into m.z.
func (m *CNNHyperRep) logits(x []float64, nb int) {
	m.tail.Logits(m.z[:nb*m.classes], x, m.hb[:nb*m.feat], nb)
}

// softmaxGrad turns the logits of the chunk into probabilities, writes
// G = inv·(p − e_y) into m.g and returns the chunk's summed cross-entropy.
func (m *CNNHyperRep) softmaxGrad(d *datasets.Dataset, idx []int, lo, nb int, inv float64) float64 {
	C := m.classes
	var loss float64
	for b := range nb {
		y := d.Y[rowIndex(d, idx, lo+b)]
		z, g := m.z[b*C:(b+1)*C], m.g[b*C:(b+1)*C]
		lse := vec.LogSumExp(z)
		loss += lse - z[y]
		for j := range C {
			z[j] = math.Exp(z[j] - lse)
			g[j] = z[j]
			if j == y {
				g[j]--
			}
			g[j] *= inv
		}
	}
	return loss
}

// rGrad writes R{G} = inv·(p ⊙ R{z} − p (pᵀR{z})) into m.rg from the
// probabilities in m.z and R{z} in m.v.
func (m *CNNHyperRep) rGrad(nb int, inv float64) {
	C := m.classes
	for b := range nb {
		p, rz, rg := m.z[b*C:(b+1)*C], m.v[b*C:(b+1)*C], m.rg[b*C:(b+1)*C]
		var s float64
		for j := range C {
			s += p[j] * rz[j]
		}
		for j := range C {
			rg[j] = inv * p[j] * (rz[j] - s)
		}
	}
}

// InnerLoss implements Bilevel: g.
func (m *CNNHyperRep) InnerLoss(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	C := m.classes
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		for b := range nb {
			z := m.z[b*C : (b+1)*C]
			loss += vec.LogSumExp(z) - z[d.Y[rowIndex(d, idx, lo+b)]]
		}
	}
	return loss/float64(n) + 0.5*m.mu*sumSquares(x)
}

// InnerGrad implements Bilevel: ∇ₓg, by the tail alone.
func (m *CNNHyperRep) InnerGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		loss += m.softmaxGrad(d, idx, lo, nb, inv)
		m.tail.VJP(dst, x, m.g[:nb*m.classes])
	}
	vec.AddScaled(dst, m.mu, x)
	return loss*inv + 0.5*m.mu*sumSquares(x)
}

// InnerHVP implements Bilevel: ∇²ₓₓg·u, by the tail alone.
func (m *CNNHyperRep) InnerHVP(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	checkVec("u", u, m.DimX())
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	C := m.classes
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		m.tail.JVP(m.v[:nb*C], x, u)
		m.softmaxGrad(d, idx, lo, nb, inv)
		m.rGrad(nb, inv)
		m.tail.VJPR(dst, x, u, m.g[:nb*C], m.rg[:nb*C])
	}
	vec.AddScaled(dst, m.mu, u)
}

// InnerCross implements Bilevel: the gradient in λ of ⟨∇ₓg, u⟩, the
// body's VJP of its gradient in h (μ‖x‖² does not depend on λ).
func (m *CNNHyperRep) InnerCross(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimLambda())
	checkVec("u", u, m.DimX())
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	C, F := m.classes, m.feat
	m.discardTail = resize(m.discardTail, m.DimX())
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, true)
		m.logits(x, nb)
		m.tail.JVP(m.v[:nb*C], x, u)
		m.softmaxGrad(d, idx, lo, nb, inv)
		m.rGrad(nb, inv)
		// The tail's parameter part is ∇²ₓₓg·u, not wanted here; it is
		// cleared so that it cannot grow over many calls.
		clear(m.discardTail)
		m.tail.VJPRInput(m.discardTail, m.gh[:nb*F], x, u, m.g[:nb*C], m.rg[:nb*C])
		m.body.VJP(dst, lambda, m.gh[:nb*F])
	}
}

// OuterGradTakesNil implements PartialOuter.
func (*CNNHyperRep) OuterGradTakesNil() {}

// OuterGrad implements Bilevel: f = mean CE, ∂ₓf by the tail and ∂_λf by
// the body's VJP of the tail's gradient in h. dstX or dstLambda may be nil
// when that part is not wanted.
func (m *CNNHyperRep) OuterGrad(dstX, dstLambda, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	if dstX != nil {
		checkVec("dstX", dstX, m.DimX())
		clear(dstX)
	}
	if dstLambda != nil {
		checkVec("dstLambda", dstLambda, m.DimLambda())
		clear(dstLambda)
	}
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	C, F := m.classes, m.feat
	gx := dstX
	if gx == nil && dstLambda != nil {
		m.discardTail = resize(m.discardTail, m.DimX())
		clear(m.discardTail)
		gx = m.discardTail
	}
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, dstLambda != nil)
		m.logits(x, nb)
		loss += m.softmaxGrad(d, idx, lo, nb, inv)
		switch {
		case dstLambda != nil:
			m.tail.VJPInput(gx, m.gh[:nb*F], x, m.g[:nb*C])
			m.body.VJP(dstLambda, lambda, m.gh[:nb*F])
		case dstX != nil:
			m.tail.VJP(dstX, x, m.g[:nb*C])
		}
	}
	return loss * inv
}

// Accuracy implements Bilevel.
func (m *CNNHyperRep) Accuracy(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.cache.of(lambda, d, m.feat)
	n := batchSize(d, idx)
	C := m.classes
	right := 0
	for lo, hi := range chunks(n) {
		nb := m.chunk(c, lambda, d, idx, lo, hi, false)
		m.logits(x, nb)
		right += hits(m.z, C, d, idx, lo, nb)
	}
	return float64(right) / float64(n)
}
