package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"hgpsim/datasets"
	"hgpsim/models/nn"
)

// Net is a network of package nn plus a loss head, as a Classifier: the
// mean loss of the net's outputs plus (L2/2)‖x‖². Every model kind is one:
// softmax regression, logistic regression and the tanh MLP are nn presets
// (nn.SoftmaxRegression, nn.LogisticRegression, nn.TanhMLP), a cnn is a
// preset or a layer list of its own. Its rows are the samples flattened
// channel by channel (NCHW), as the image sources store them.
//
// The head is the softmax cross-entropy of the net's C logits, or, for
// logistic regression, the binary cross-entropy softplus(z) − y·z of its
// one output z, whose logits towards the heads are [0, z]. Every head of
// the package and the per-sample weighted loss run on a Net through the
// batch primitives, which forward to the net's Logits, JVP, VJP and VJPR
// (exact, forward-over-reverse).
//
// A *Net holds scratch and, during a call, a workspace from the pool its
// clones share (see workPool): one goroutine at a time, Clone for others.
type Net[F Float] struct {
	// proto describes the net; net is the workspace of the current call
	// sequence (nil between calls), from pool, which the clones share.
	proto, net        *nn.Net[F]
	pool              *workPool[F]
	held              int
	in                nn.Shape
	layers            []nn.Spec // as given, for heads that split the net (HyperRep)
	features, classes int
	l2                float64
	binary            bool // the logistic head: one output z, logits [0, z]
	// init draws initial parameters; nil: nn's (PyTorch's defaults).
	init func(dst []F, r *rand.Rand)
	// hidden is the hidden width of the tanh-MLP preset, 0 for the others.
	hidden int

	s classifierScratch[F]
	t []F // the binary head's margins or their gradients, one a row
	n int // rows of the last batchLogits
}

var (
	_ Classifier[float64] = (*Net[float64])(nil)
	_ Classifier[float32] = (*Net[float32])(nil)
)

// NewNet returns the network of the given layers on inputs of shape in
// with the softmax cross-entropy head, drawn as nn.Net.Init draws. It
// returns an error for a stack New of package nn refuses, or when in is
// empty.
func NewNet[F Float](in nn.Shape, layers []nn.Spec, classes int, l2 float64) (*Net[F], error) {
	if in.Size() < 1 {
		return nil, fmt.Errorf("input shape %v is empty", in)
	}
	checkL2("NewNet", l2)
	net, err := nn.New[F](in, layers, classes)
	if err != nil {
		return nil, err
	}
	return &Net[F]{proto: net, pool: &workPool[F]{proto: net}, in: in, layers: slices.Clone(layers), features: in.Size(), classes: classes, l2: l2}, nil
}

// mustPreset builds a preset whose arguments were checked.
func mustPreset[F Float](features int, layers []nn.Spec, outputs int, l2 float64) *Net[F] {
	m, err := NewNet[F](nn.Shape{C: features, H: 1, W: 1}, layers, outputs, l2)
	if err != nil {
		panic(fmt.Sprintf("models: preset: %v", err))
	}
	return m
}

// NewSoftmax returns multinomial logistic regression with L2
// regularization, the nn preset SoftmaxRegression:
//
//	f(x) = mean_b CE(softmax(W a_b + c), y_b) + (L2/2)‖x‖²
//
// where a_b is the feature row and y_b the label of example b. All
// parameters, the bias c included, are regularized, so f is L2-strongly
// convex (Assumption 1 of the paper) and the lower-level problem has a
// unique solution. Layout of x: W (Classes×Features, row-major), then c.
// It panics if features < 1, classes < 2 or l2 is negative or not finite:
// these come from an already validated configuration.
func NewSoftmax[F Float](features, classes int, l2 float64) *Net[F] {
	if features < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewSoftmax(features=%d, classes=%d): need features >= 1, classes >= 2", features, classes))
	}
	checkL2("NewSoftmax", l2)
	m := mustPreset[F](features, nn.SoftmaxRegression(classes), classes, l2)
	m.init = smallNormal[F]
	return m
}

// NewLogistic returns binary logistic regression with L2 regularization,
// the nn preset LogisticRegression with the binary head:
//
//	f(x) = mean_b [softplus(z_b) − y_b z_b] + (L2/2)‖x‖²,  z_b = wᵀa_b + c
//
// with labels y_b ∈ {0, 1}; the bracket is the cross-entropy of
// σ(z_b) = P(y = 1). The bias is regularized too, so f is L2-strongly
// convex. Datasets must have C = 2. Layout of x: w (Features), then c. It
// panics if features < 1 or l2 is negative or not finite.
func NewLogistic[F Float](features int, l2 float64) *Net[F] {
	if features < 1 {
		panic(fmt.Sprintf("models: NewLogistic(features=%d): need features >= 1", features))
	}
	checkL2("NewLogistic", l2)
	m := mustPreset[F](features, nn.LogisticRegression(), 1, l2)
	m.classes, m.binary, m.init = 2, true, smallNormal
	return m
}

// NewMLP returns the one-hidden-layer perceptron with tanh activation and
// softmax cross-entropy output, with L2 regularization of all parameters,
// the nn preset TanhMLP:
//
//	h = tanh(W₁a + b₁),  z = W₂h + b₂,
//	f(x) = mean_b CE(softmax(z_b), y_b) + (L2/2)‖x‖²
//
// f is not convex; it is the model for experiments beyond Assumption 1.
// Layout of x: W₁ (Hidden×Features, row-major), b₁ (Hidden),
// W₂ (Classes×Hidden, row-major), b₂ (Classes). It panics if features < 1,
// hidden < 1, classes < 2 or l2 is negative or not finite.
func NewMLP[F Float](features, hidden, classes int, l2 float64) *Net[F] {
	if features < 1 || hidden < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewMLP(features=%d, hidden=%d, classes=%d): need features >= 1, hidden >= 1, classes >= 2",
			features, hidden, classes))
	}
	checkL2("NewMLP", l2)
	m := mustPreset[F](features, nn.TanhMLP(hidden, classes), classes, l2)
	m.hidden = hidden
	m.init = m.fanInNormal
	return m
}

// checkL2 panics unless l2 is a finite non-negative number.
func checkL2(who string, l2 float64) {
	if !(l2 >= 0) || math.IsInf(l2, 0) {
		panic(fmt.Sprintf("models: %s: l2=%v, need a finite value >= 0", who, l2))
	}
}

// smallNormal fills dst with N(0, 0.01²) draws from r: the start of the
// strongly convex linear models. It does not change their solution; a small
// random one keeps clients that each draw from their own stream apart,
// which is what exercises consensus.
func smallNormal[F Float](dst []F, r *rand.Rand) {
	for i := range dst {
		dst[i] = F(0.01 * r.NormFloat64())
	}
}

// fanInNormal draws the MLP's W₁ from N(0, 1/Features) and W₂ from
// N(0, 1/Hidden) and sets the biases to 0. Variance 1/fan-in keeps the
// pre-activations of order one, where tanh is neither linear nor
// saturated; the random weights break the symmetry between hidden units,
// which zero biases do not need to.
func (m *Net[F]) fanInNormal(dst []F, r *rand.Rand) {
	D, H, C := m.features, m.hidden, m.classes
	clear(dst)
	s1 := 1 / math.Sqrt(float64(D))
	for i := range dst[:H*D] {
		dst[i] = F(s1 * r.NormFloat64())
	}
	s2 := 1 / math.Sqrt(float64(H))
	for i := H*D + H; i < H*D+H+C*H; i++ {
		dst[i] = F(s2 * r.NormFloat64())
	}
}

// Dim returns the number of parameters.
func (m *Net[F]) Dim() int { return m.proto.Dim() }

// Clone returns a Net with the same layers, head and L2, its own scratch
// and the workspaces of m's pool.
func (m *Net[F]) Clone() Model[F] {
	c := *m
	c.net, c.held = nil, 0
	c.s, c.t, c.n = classifierScratch[F]{}, nil, 0
	if m.hidden > 0 {
		c.init = c.fanInNormal
	}
	return &c
}

// Init draws initial parameters: the preset's scheme, or PyTorch's default
// initialization (see nn.Net.Init).
func (m *Net[F]) Init(dst []F, r *rand.Rand) {
	checkVec("dst", dst, m.Dim())
	if m.init != nil {
		m.init(dst, r)
		return
	}
	m.proto.Init(dst, r)
}

func (m *Net[F]) check(x []F, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}

// Loss returns f(x) on the batch.
func (m *Net[F]) Loss(x []F, d *datasets.Dataset, idx []int) float64 {
	m.hold()
	defer m.unhold()
	m.check(x, d)
	if m.binary {
		return m.logisticLoss(x, d, idx)
	}
	return meanCrossEntropy(m, &m.s, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), with the same value Loss
// returns.
func (m *Net[F]) Grad(dst, x []F, d *datasets.Dataset, idx []int) float64 {
	m.hold()
	defer m.unhold()
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	if m.binary {
		return m.logisticGrad(dst, x, d, idx)
	}
	return classifierGrad(m, &m.s, dst, x, d, idx)
}

// HVP writes ∇²f(x)·u into dst, by the R-operator through the net.
func (m *Net[F]) HVP(dst, x []F, d *datasets.Dataset, idx []int, u []F) {
	m.hold()
	defer m.unhold()
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	if m.binary {
		m.logisticHVP(dst, x, d, idx, u)
		return
	}
	classifierHVP(m, &m.s, dst, x, d, idx, u)
}

// Accuracy returns the fraction of rows whose largest logit is the label
// (for the binary head: z > 0 exactly when y = 1).
func (m *Net[F]) Accuracy(x []F, d *datasets.Dataset, idx []int) float64 {
	m.hold()
	defer m.unhold()
	m.check(x, d)
	if m.binary {
		return m.logisticAccuracy(x, d, idx)
	}
	return classifierAccuracy(m, &m.s, x, d, idx)
}

func (m *Net[F]) shape() (int, int) { return m.features, m.classes }
func (m *Net[F]) l2Rate() float64   { return m.l2 }

func (m *Net[F]) batchLogits(Z, x, A []F, n int) {
	m.n = n
	if !m.binary {
		m.ws().Logits(Z[:n*m.classes], x, A[:n*m.features], n)
		return
	}
	m.t = resize(m.t, n)
	m.ws().Logits(m.t, x, A[:n*m.features], n)
	pairs(Z, m.t)
}

// linearRows implements statelessRows: one dense layer (softmax and
// logistic regression) reads nothing of its forward pass but the rows.
func (m *Net[F]) linearRows() bool { return m.proto.Stateless() }

// bindRows implements statelessRows.
func (m *Net[F]) bindRows(A []F, n int) {
	m.n = n
	if m.binary {
		m.t = resize(m.t, n)
	}
	m.ws().Bind(A[:n*m.features], n)
}

func (m *Net[F]) batchJVP(V, x, u []F) {
	if !m.binary {
		m.ws().JVP(V[:m.n*m.classes], x, u)
		return
	}
	m.ws().JVP(m.t[:m.n], x, u)
	pairs(V, m.t[:m.n])
}

// batchVJP: the binary head's constant logit 0 has no parameters, so
// G_b0 never reaches dst.
func (m *Net[F]) batchVJP(dst, x, G []F) {
	if !m.binary {
		m.ws().VJP(dst, x, G)
		return
	}
	for b := range m.n {
		m.t[b] = G[2*b+1]
	}
	m.ws().VJP(dst, x, m.t[:m.n])
}

// batchVJPR: the binary head's net is linear in x, so this is the VJP of
// RG.
func (m *Net[F]) batchVJPR(dst, x, u, G, RG []F) {
	if !m.binary {
		m.ws().VJPR(dst, x, u, G, RG)
		return
	}
	m.batchVJP(dst, x, RG)
}

// pairs writes the logits [0, z_b] of the margins z into the rows of Z.
func pairs[F Float](Z, z []F) {
	for b, v := range z {
		Z[2*b], Z[2*b+1] = 0, v
	}
}
