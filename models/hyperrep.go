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

// HyperRep is the federated hyper-representation problem of FedNest
// (Tarzanagh et al. 2022) and FBO-AggITD (Sec. 5, App. A.2) on any network
// of package nn cut in two: the layers before the cut are the OUTER
// variable λ and the last k parameterised layers, which must be dense, the
// INNER one x. In this package's names (Bilevel):
//
//	body  a → h = B(a; λ)  (everything up to the cut),
//	tail  h → z = T(h; x)  (the last k dense layers and the activations
//	                        between them),
//	g(x, λ) = mean_b CE(z_b, y_b) + (μ/2)‖x‖²   (InnerLoss, on train data),
//	f(x, λ) = mean_b CE(z_b, y_b)               (OuterGrad, on validation data),
//
// so λ is the head of the net's PyTorch-ordered parameter vector and x its
// tail. The papers' MLP (NewHyperRep) is the cut of dense H, σ, dense C
// after σ: λ = (W₁, b₁) (157,000 for 784→200), x = (W₂, b₂) (2,010 for
// 200→10), σ = ReLU or tanh; FBO-AggITD's LeNet (NewCNNHyperRep, k = 2)
// is cut before dense 84, so that h is the 120 ReLU outputs.
//
// μ > 0 makes g strongly convex in x when the tail is one dense layer (a
// softmax regression on h); for k = 2 the lower level is a small
// non-convex net, as in the paper. f has no regularizer. For fixed λ the
// features h of a row do not change, so HyperRep caches them per dataset
// and row until λ changes (compared by value): InnerLoss, InnerGrad,
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
// ReLU's second derivative is 0 almost everywhere, which is what the
// products use (the papers' baseline code does the same through autograd).
//
// Two choices of the FedNest authors' released code, not stated in either
// paper, are options (HyperRepOptions; both off by default): dropout on the
// features h in the training products, and the penalty μ Σ‖w‖ over the
// tensors w of x (a norm per tensor, not squared) in place of (μ/2)‖x‖².
//
// A *HyperRep holds the nets' workspaces and the cache: one goroutine per
// value, Clone for others. Datasets must stay unchanged once used (they
// are read-only by contract), since the cache is keyed by their address.
type HyperRep[F Float] struct {
	body, tail *nn.Net[F]
	in         nn.Shape
	bodyLayers []nn.Spec
	tailLayers []nn.Spec
	features   int // D = in.Size()
	feat       int // nf, the floats of h
	classes    int
	mu         float64
	opt        HyperRepOptions
	tensors    [][2]int // the ranges of x's weight and bias tensors, for NormPenalty

	// mlp marks the papers' MLP cut (NewHyperRep), whose recorded runs
	// drew x and λ as normals and formed ∂/∂h from (p − e_y) unscaled,
	// scaling by 1/n after (see crossFeaturesMLP); relu is its σ.
	mlp, relu bool

	// Dropout mask of the products (masking false: none, as in evaluation).
	masking bool
	key     uint64

	cache featureCaches[F] // of the features h (nf floats a row)

	// Per-chunk scratch.
	miss        []int
	a           []F // gathered rows
	hm          []F // the misses' features
	hb          []F // nb×nf: the chunk's features h_b (masked under dropout)
	keep        []F // nb×nf: dropout factors, 0 or 1/(1−p)
	gh          []F // nb×nf: a gradient in h
	z, v, g, rg []F // nb×C: logits (then probabilities), R{z}, G, R{G}
	gu          []F // nb×C: the MLP cut's unscaled p − e_y
	g2          []F // nb×2C: the MLP cut's (R{p}_j, (p − e_y)_j) pairs
	xu          []F // 2C×nf: the rows W_j, U_j of x and u, interleaved
	discardTail []F // DimX: tail parameter gradients not asked for

	// λ as F for the body (a view of λ for float64, a rounded copy for
	// float32), set by begin; lamGrad accumulates a float32 body's
	// gradient in λ before it is widened into the caller's float64 dst.
	lam, lamGrad []F
}

// HyperRepOptions are HyperRep's choices beyond the papers' text, taken
// from the FedNest authors' released code; the zero value is the papers'
// model.
type HyperRepOptions struct {
	// Dropout is the probability p, in [0, 1), that a feature of h is
	// dropped (set to 0, the others scaled by 1/(1−p)) in a product under
	// a mask (SetMask). The released code applies PyTorch's dropout (p =
	// 0.5) to the hidden pre-activation before ReLU, which for ReLU is the
	// same as dropping the feature; for tanh we drop the feature.
	Dropout float64
	// NormPenalty makes the penalty of g μ Σ‖w‖ over the weight and bias
	// tensors w of x, the Euclidean norm of each, not squared (the
	// released code's 0.5·β·Σ‖k‖ with β = 0.1, so μ = 0.05 there), instead
	// of (μ/2)‖x‖². Its gradient at a zero tensor is taken as 0 (PyTorch's
	// choice). g is then not strongly convex in x.
	NormPenalty bool
}

// Dropout is implemented by Bilevel models that drop features in their
// training products (HyperRep with a dropout rate).
type Dropout interface {
	// DropoutRate is the probability p that a feature is dropped (0: the
	// model has no dropout).
	DropoutRate() float64
	// SetMask makes the following products use the mask of key, until the
	// next call: position k of the minibatch (row k of a full batch) keeps
	// feature q when a hash of (key, k, q), uniform in [0, 1), is at least
	// p. A product under a fixed key is an exact product of one
	// deterministic function. on = false turns masking off (evaluation).
	SetMask(key uint64, on bool)
}

// LambdaInitializer is implemented by Bilevel models whose λ must not
// start at 0 (HyperRep); the others start from λ = 0.
type LambdaInitializer interface {
	InitLambda(dst []float64, r *rand.Rand)
}

var (
	_ Bilevel[float64]      = (*HyperRep[float64])(nil)
	_ LambdaInitializer     = (*HyperRep[float64])(nil)
	_ Dropout               = (*HyperRep[float64])(nil)
	_ PartialOuter[float64] = (*HyperRep[float64])(nil)
	_ PartialOuter[float32] = (*HyperRep[float32])(nil)
)

// NewHyperRep returns the hyper-representation of the papers' MLP: λ the
// hidden layer (dense hidden, then ReLU or tanh), x the output layer. It
// panics on sizes below 1 (classes below 2) or a negative or non-finite μ.
func NewHyperRep[F Float](features, hidden, classes int, mu float64, relu bool) *HyperRep[F] {
	return NewHyperRepWith[F](features, hidden, classes, mu, relu, HyperRepOptions{})
}

// NewHyperRepWith returns the hyper-representation of the papers' MLP with
// options. It panics where NewHyperRep does and on a dropout rate outside
// [0, 1).
func NewHyperRepWith[F Float](features, hidden, classes int, mu float64, relu bool, o HyperRepOptions) *HyperRep[F] {
	if features < 1 || hidden < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewHyperRep(features=%d, hidden=%d, classes=%d): need features >= 1, hidden >= 1, classes >= 2",
			features, hidden, classes))
	}
	checkL2("NewHyperRep: mu", mu)
	if !(o.Dropout >= 0 && o.Dropout < 1) {
		panic(fmt.Sprintf("models: NewHyperRepWith: dropout %v not in [0, 1)", o.Dropout))
	}
	act := nn.Tanh()
	if relu {
		act = nn.ReLU()
	}
	m, err := newHyperRep[F](nn.Shape{C: features, H: 1, W: 1}, []nn.Spec{nn.Dense(hidden), act}, []nn.Spec{nn.Dense(classes)}, hidden, classes, mu)
	if err != nil {
		panic("models: NewHyperRep: " + err.Error())
	}
	m.mlp, m.relu, m.opt = true, relu, o
	return m
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
// being the inner variable x, both drawn as nn.Net.Init draws. It returns
// SplitHyperRep's errors; it panics on a negative or non-finite μ.
func NewCNNHyperRep[F Float](in nn.Shape, layers []nn.Spec, classes, k int, mu float64) (*HyperRep[F], error) {
	checkL2("NewCNNHyperRep: mu", mu)
	bodyL, tailL, f, err := SplitHyperRep(in, layers, classes, k)
	if err != nil {
		return nil, err
	}
	return newHyperRep[F](in, bodyL, tailL, f, classes, mu)
}

func newHyperRep[F Float](in nn.Shape, bodyL, tailL []nn.Spec, f, classes int, mu float64) (*HyperRep[F], error) {
	body, err := nn.New[F](in, bodyL, f)
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	tail, err := nn.New[F](nn.Shape{C: f, H: 1, W: 1}, tailL, classes)
	if err != nil {
		return nil, fmt.Errorf("tail: %w", err)
	}
	m := &HyperRep[F]{body: body, tail: tail, in: in, bodyLayers: bodyL, tailLayers: tailL,
		features: in.Size(), feat: f, classes: classes, mu: mu}
	// A dense layer's parameters are its weight and then its bias.
	info := tail.Info()
	for i, sp := range tailL {
		lo, hi := info.Offsets[i], info.Offsets[i+1]
		if sp.Kind == nn.KindDense && hi > lo {
			w := hi - lo - info.Shapes[i].Size()
			m.tensors = append(m.tensors, [2]int{lo, lo + w}, [2]int{lo + w, hi})
		}
	}
	return m, nil
}

// DimX implements Bilevel: the tail's parameters.
func (m *HyperRep[F]) DimX() int { return m.tail.Dim() }

// DimLambda implements Bilevel: the body's parameters.
func (m *HyperRep[F]) DimLambda() int { return m.body.Dim() }

// Clone implements Bilevel: the same nets with their own workspaces and an
// empty cache.
func (m *HyperRep[F]) Clone() Bilevel[F] {
	c, err := newHyperRep[F](m.in, m.bodyLayers, m.tailLayers, m.feat, m.classes, m.mu)
	if err != nil {
		panic("models: Clone of a valid HyperRep failed: " + err.Error())
	}
	c.mlp, c.relu, c.opt = m.mlp, m.relu, m.opt
	return c
}

// Init implements Bilevel. The MLP's W₂ ~ N(0, 1/Hidden), b₂ = 0; a cut
// net's tail is drawn as PyTorch's defaults (see nn.Net.Init).
func (m *HyperRep[F]) Init(dst []F, r *rand.Rand) {
	checkVec("dst", dst, m.DimX())
	if !m.mlp {
		m.tail.Init(dst, r)
		return
	}
	normalWeights(dst, m.classes*m.feat, 1/math.Sqrt(float64(m.feat)), r)
}

// InitLambda implements LambdaInitializer. The MLP's W₁ ~ N(0, g/Features)
// with g = 2 for ReLU (He) and 1 for tanh, b₁ = 0 (λ = 0 would make every
// feature 0 and the problem degenerate); a cut net's body is drawn as
// PyTorch's defaults.
func (m *HyperRep[F]) InitLambda(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimLambda())
	if !m.mlp {
		if vec.Is64[F]() {
			m.body.Init(vec.View[F](dst), r)
			return
		}
		// The same draws as the float64 body's, rounded to F once:
		// λ keeps float64 (see the package documentation).
		w := make([]F, len(dst))
		m.body.Init(w, r)
		for i, v := range w {
			dst[i] = float64(v)
		}
		return
	}
	g := 1.0
	if m.relu {
		g = 2
	}
	normalWeights(dst, m.feat*m.features, math.Sqrt(g/float64(m.features)), r)
}

// normalWeights draws the first k parameters of dst (a dense layer's
// weights) from N(0, s²) and sets the rest (its bias) to 0.
func normalWeights[F Float](dst []F, k int, s float64, r *rand.Rand) {
	clear(dst)
	for i := range dst[:k] {
		dst[i] = F(s * r.NormFloat64())
	}
}

// DropoutRate implements Dropout.
func (m *HyperRep[F]) DropoutRate() float64 { return m.opt.Dropout }

// SetMask implements Dropout. It is a no-op without a dropout rate.
func (m *HyperRep[F]) SetMask(key uint64, on bool) {
	m.key, m.masking = key, on && m.opt.Dropout > 0
}

// keepFactor is feature q's dropout factor at batch position k under the
// current key: 0 or 1/(1−p). The hash is splitmix64's finalizer over the
// three words, so the mask does not depend on how a batch is chunked.
func (m *HyperRep[F]) keepFactor(k, q int) float64 {
	z := m.key ^ (uint64(k)+1)*0x9e3779b97f4a7c15 ^ (uint64(q)+1)*0xc2b2ae3d27d4eb4f
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	if float64(z>>11)/(1<<53) < m.opt.Dropout {
		return 0
	}
	return 1 / (1 - m.opt.Dropout)
}

func (m *HyperRep[F]) check(x []F, lambda []float64, d *datasets.Dataset) {
	checkArgs(m, x, lambda, d, m.features, m.classes)
}

// chunk leaves the features of the batch rows lo…hi−1 (positions in idx)
// in the rows of m.hb, checks their labels and returns nb = hi − lo. With
// full it runs the body on all the chunk's rows, so that a body VJP can
// follow; otherwise only on the rows the cache lacks. Either way the cache
// ends up holding every row of the chunk: a row's features do not depend
// on the other rows of its batch (nn computes each sample's outputs in a
// fixed order), so the cache holds the same bits whichever call filled it.
// Under a dropout mask the features in m.hb are masked (the cache's are
// not).
func (m *HyperRep[F]) chunk(c *featureCache[F], lambda []F, d *datasets.Dataset, idx []int, lo, hi int, full bool) int {
	nf, C := m.feat, m.classes
	nb := hi - lo
	for b := range nb {
		label(d, rowIndex(d, idx, lo+b), C)
	}
	m.hb = resize(m.hb, nb*nf)
	if full {
		rows := batchRows(&m.a, d, idx, lo, hi)
		m.body.Logits(m.hb, lambda, rows, nb)
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			copy(c.h[i*nf:(i+1)*nf], m.hb[b*nf:(b+1)*nf])
			m.cache.mark(c, i)
		}
	} else {
		m.miss = m.cache.misses(m.miss[:0], c, d, idx, lo, hi)
		if nm := len(m.miss); nm > 0 {
			m.a = resize(m.a, nm*m.features)
			m.hm = resize(m.hm, nm*nf)
			gatherAs(d, m.a, m.miss)
			m.body.Logits(m.hm, lambda, m.a, nm)
			for k, i := range m.miss {
				copy(c.h[i*nf:(i+1)*nf], m.hm[k*nf:(k+1)*nf])
			}
		}
		for b := range nb {
			i := rowIndex(d, idx, lo+b)
			copy(m.hb[b*nf:(b+1)*nf], c.h[i*nf:(i+1)*nf])
		}
	}
	if m.masking {
		m.keep = resize(m.keep, nb*nf)
		for b := range nb {
			for q := range nf {
				f := m.keepFactor(lo+b, q)
				m.keep[b*nf+q] = F(f)
				m.hb[b*nf+q] *= F(f)
			}
		}
	}
	for _, buf := range []*[]F{&m.z, &m.v, &m.g, &m.rg, &m.gu} {
		*buf = resize(*buf, nb*C)
	}
	m.gh = resize(m.gh, nb*nf)
	return nb
}

// penalty is (μ/2)‖x‖², or μ Σ‖w‖ over x's tensors under NormPenalty.
func (m *HyperRep[F]) penalty(x []F) float64 {
	if !m.opt.NormPenalty {
		return 0.5 * m.mu * sumSquares(x)
	}
	var s float64
	for _, t := range m.tensors {
		s += math.Sqrt(sumSquares(x[t[0]:t[1]]))
	}
	return m.mu * s
}

// addPenaltyGrad adds the penalty's gradient: μx, or μw/‖w‖ per tensor w.
func (m *HyperRep[F]) addPenaltyGrad(dst, x []F) {
	if !m.opt.NormPenalty {
		addScaled(dst, m.mu, x)
		return
	}
	for _, t := range m.tensors {
		w := x[t[0]:t[1]]
		if nw := math.Sqrt(sumSquares(w)); nw > 0 {
			addScaled(dst[t[0]:t[1]], m.mu/nw, w)
		}
	}
}

// addPenaltyHVP adds the penalty's Hessian times u: μu, or
// μ(u/‖w‖ − w(wᵀu)/‖w‖³) per tensor w (0 at w = 0).
func (m *HyperRep[F]) addPenaltyHVP(dst, x, u []F) {
	if !m.opt.NormPenalty {
		addScaled(dst, m.mu, u)
		return
	}
	for _, t := range m.tensors {
		w, uw, dw := x[t[0]:t[1]], u[t[0]:t[1]], dst[t[0]:t[1]]
		nw := math.Sqrt(sumSquares(w))
		if nw == 0 {
			continue
		}
		addScaled(dw, m.mu/nw, uw)
		addScaled(dw, -m.mu*dotF(w, uw)/(nw*nw*nw), w)
	}
}
