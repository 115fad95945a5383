package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/vec"
)

// HyperRep is the federated hyper-representation problem of FedNest
// (Tarzanagh et al. 2022) and FBO-AggITD (Sec. 5, App. A.2): a
// one-hidden-layer perceptron whose hidden layer is the OUTER variable and
// whose output layer is the INNER one. In this package's names (Bilevel):
//
//	λ = (W₁, b₁)  (Hidden×Features + Hidden; 157,000 for 784→200),
//	x = (W₂, b₂)  (Classes×Hidden + Classes; 2,010 for 200→10),
//	h = σ(W₁a + b₁),  z = W₂h + b₂,  σ = ReLU (default) or tanh,
//	g(x, λ) = mean_b CE(z_b, y_b) + (μ/2)‖x‖²   (InnerLoss, on train data),
//	f(x, λ) = mean_b CE(z_b, y_b)               (OuterGrad, on validation data).
//
// μ > 0 makes g strongly convex in x (the papers' Assumption 1; g is a
// softmax regression on the features h). f has no regularizer. For fixed λ
// the features h of a row do not change, so HyperRep caches them per
// dataset and row until λ changes (compared by value): the lower level of
// the federated methods then costs C·H per row instead of H·D.
//
// Every product is exact: ∇ₓg, ∇²ₓₓg·u (the softmax Hessian on the
// features), the cross product (∂_λ∇ₓg)ᵀu (backpropagation of ⟨∇ₓg, u⟩ into
// the hidden layer) and ∂_λf. ReLU's second derivative is 0 almost
// everywhere, which is what the products use (the papers' baseline code
// does the same through autograd).
//
// A *HyperRep holds scratch and the cache: one goroutine per value, Clone
// for others. Datasets must stay unchanged once used (they are read-only by
// contract), since the cache is keyed by their address.
type HyperRep struct {
	features, hidden, classes int
	mu                        float64
	relu                      bool

	z, p, v, gz, gh []float64 // per-row scratch
	lam             []float64 // the λ the cache was built for
	gen             uint64    // bumped whenever λ changes
	cache           []*featureCache
}

// featureCache holds the hidden features of a dataset's rows for λ of
// generation gen (row i valid when done[i] == gen).
type featureCache struct {
	d    *Dataset
	h    []float64
	done []uint64
}

// maxFeatureCaches bounds the datasets whose features are kept (train,
// validation, test and one more).
const maxFeatureCaches = 4

// NewHyperRep returns the hyper-representation model. It panics on sizes
// below 1 (classes below 2) or a negative or non-finite μ.
func NewHyperRep(features, hidden, classes int, mu float64, relu bool) *HyperRep {
	if features < 1 || hidden < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewHyperRep(features=%d, hidden=%d, classes=%d): need features >= 1, hidden >= 1, classes >= 2",
			features, hidden, classes))
	}
	checkL2("NewHyperRep: mu", mu)
	return &HyperRep{features: features, hidden: hidden, classes: classes, mu: mu, relu: relu,
		z: make([]float64, classes), p: make([]float64, classes), v: make([]float64, classes),
		gz: make([]float64, classes), gh: make([]float64, hidden)}
}

// DimX implements Bilevel: the output layer.
func (m *HyperRep) DimX() int { return m.classes*m.hidden + m.classes }

// DimLambda implements Bilevel: the hidden layer.
func (m *HyperRep) DimLambda() int { return m.hidden*m.features + m.hidden }

// Clone implements Bilevel.
func (m *HyperRep) Clone() Bilevel {
	return NewHyperRep(m.features, m.hidden, m.classes, m.mu, m.relu)
}

// Init implements Bilevel: W₂ ~ N(0, 1/Hidden), b₂ = 0.
func (m *HyperRep) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimX())
	clear(dst)
	s := 1 / math.Sqrt(float64(m.hidden))
	for i := range dst[:m.classes*m.hidden] {
		dst[i] = s * r.NormFloat64()
	}
}

// InitLambda writes initial outer parameters: W₁ ~ N(0, g/Features) with
// g = 2 for ReLU (He) and 1 for tanh, b₁ = 0. (λ = 0 would make every
// feature 0 and the problem degenerate.)
func (m *HyperRep) InitLambda(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.DimLambda())
	clear(dst)
	g := 1.0
	if m.relu {
		g = 2
	}
	s := math.Sqrt(g / float64(m.features))
	for i := range dst[:m.hidden*m.features] {
		dst[i] = s * r.NormFloat64()
	}
}

// LambdaInitializer is implemented by Bilevel models whose λ must not
// start at 0 (HyperRep); the others start from λ = 0.
type LambdaInitializer interface {
	InitLambda(dst []float64, r *rand.Rand)
}

var (
	_ Bilevel           = (*HyperRep)(nil)
	_ LambdaInitializer = (*HyperRep)(nil)
)

func (m *HyperRep) check(x, lambda []float64, d *Dataset) {
	checkVec("x", x, m.DimX())
	checkVec("lambda", lambda, m.DimLambda())
	checkData(d, m.features, m.classes)
}

// features returns the cache of d for λ, refreshing the generation when λ
// changed.
func (m *HyperRep) featuresOf(lambda []float64, d *Dataset) *featureCache {
	if !slices.Equal(m.lam, lambda) {
		m.lam = append(m.lam[:0], lambda...)
		m.gen++
	}
	for _, c := range m.cache {
		if c.d == d {
			return c
		}
	}
	c := &featureCache{d: d, h: make([]float64, d.N*m.hidden), done: make([]uint64, d.N)}
	if len(m.cache) == maxFeatureCaches {
		m.cache = m.cache[1:]
	}
	m.cache = append(m.cache, c)
	return c
}

// row returns the features h of row i (computing them if needed).
func (m *HyperRep) row(c *featureCache, lambda []float64, i int) []float64 {
	H, D := m.hidden, m.features
	h := c.h[i*H : (i+1)*H : (i+1)*H]
	if c.done[i] == m.gen {
		return h
	}
	a := c.d.Row(i)
	b1 := lambda[H*D:]
	vec.DotRows(h, lambda, D, a) // W₁a, four rows at a time, summed as floats.Dot
	for k := range H {
		s := h[k] + b1[k]
		if m.relu {
			h[k] = max(s, 0)
		} else {
			h[k] = math.Tanh(s)
		}
	}
	c.done[i] = m.gen
	return h
}

// dsigma returns σ'(s) from h = σ(s).
func (m *HyperRep) dsigma(h float64) float64 {
	if m.relu {
		if h > 0 {
			return 1
		}
		return 0
	}
	return 1 - h*h
}

// probs sets m.z to the logits W₂h + b₂ and m.p to softmax(z); it returns
// the cross-entropy of label y.
func (m *HyperRep) probs(x, h []float64, y int) float64 {
	H := m.hidden
	b2 := x[m.classes*H:]
	for j := range m.classes {
		m.z[j] = floats.Dot(x[j*H:(j+1)*H], h) + b2[j]
	}
	lse := logSumExp(m.z)
	for j := range m.classes {
		m.p[j] = math.Exp(m.z[j] - lse)
	}
	return lse - m.z[y]
}

// InnerLoss implements Bilevel: g.
func (m *HyperRep) InnerLoss(x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.featuresOf(lambda, d)
	n := batchSize(d, idx)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		loss += m.probs(x, m.row(c, lambda, i), label(d, i, m.classes))
	}
	return loss/float64(n) + 0.5*m.mu*sumSquares(x)
}

// InnerGrad implements Bilevel: ∇ₓg = mean_b (p − e_y) ⊗ [h; 1] + μx.
func (m *HyperRep) InnerGrad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	loss := m.outputGrad(dst, x, lambda, d, idx)
	floats.AddScaled(dst, m.mu, x)
	return loss + 0.5*m.mu*sumSquares(x)
}

// outputGrad writes the gradient of the mean cross-entropy in x into dst
// and returns the mean cross-entropy.
func (m *HyperRep) outputGrad(dst, x, lambda []float64, d *Dataset, idx []int) float64 {
	H, C := m.hidden, m.classes
	c := m.featuresOf(lambda, d)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	db2 := dst[C*H:]
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		h := m.row(c, lambda, i)
		loss += m.probs(x, h, y)
		for j := range C {
			g := m.p[j]
			if j == y {
				g--
			}
			g *= inv
			floats.AddScaled(dst[j*H:(j+1)*H], g, h)
			db2[j] += g
		}
	}
	return loss * inv
}

// InnerHVP implements Bilevel: ∇²ₓₓg·u = mean_b R{p} ⊗ [h; 1] + μu with
// R{z} = U₂h + u_b₂ and R{p} = p ⊙ R{z} − p (pᵀR{z}).
func (m *HyperRep) InnerHVP(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimX())
	checkVec("u", u, m.DimX())
	H, C := m.hidden, m.classes
	c := m.featuresOf(lambda, d)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	db2 := dst[C*H:]
	for k := range n {
		i := rowIndex(d, idx, k)
		h := m.row(c, lambda, i)
		m.probs(x, h, label(d, i, C))
		s := m.rz(u, h)
		for j := range C {
			r := inv * m.p[j] * (m.v[j] - s)
			floats.AddScaled(dst[j*H:(j+1)*H], r, h)
			db2[j] += r
		}
	}
	floats.AddScaled(dst, m.mu, u)
}

// rz sets m.v = U₂h + u_b₂ (R{z} along u) and returns pᵀv.
func (m *HyperRep) rz(u, h []float64) float64 {
	H := m.hidden
	ub2 := u[m.classes*H:]
	var s float64
	for j := range m.classes {
		m.v[j] = floats.Dot(u[j*H:(j+1)*H], h) + ub2[j]
		s += m.p[j] * m.v[j]
	}
	return s
}

// InnerCross implements Bilevel: the gradient in λ of ⟨∇ₓg, u⟩ =
// mean_b (p − e_y)ᵀv with v = U₂h + u_b₂. Through h,
//
//	∂/∂h = W₂ᵀR{p} + U₂ᵀ(p − e_y),  ∂/∂s = σ'(s) ⊙ ∂/∂h,
//	∂W₁ = (∂/∂s) aᵀ,  ∂b₁ = ∂/∂s.
func (m *HyperRep) InnerCross(dst, x, lambda []float64, d *Dataset, idx []int, u []float64) {
	m.check(x, lambda, d)
	checkVec("dst", dst, m.DimLambda())
	checkVec("u", u, m.DimX())
	H, C, D := m.hidden, m.classes, m.features
	c := m.featuresOf(lambda, d)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	db1 := dst[H*D:]
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		h := m.row(c, lambda, i)
		m.probs(x, h, y)
		s := m.rz(u, h)
		clear(m.gh)
		for j := range C {
			rp := m.p[j] * (m.v[j] - s)
			g := m.p[j]
			if j == y {
				g--
			}
			floats.AddScaled(m.gh, rp, x[j*H:(j+1)*H])
			floats.AddScaled(m.gh, g, u[j*H:(j+1)*H])
		}
		m.backHidden(dst, db1, h, d.Row(i), inv)
	}
}

// backHidden adds inv·(σ'(s) ⊙ m.gh) aᵀ to W₁'s block of dst and the same
// vector to db1.
func (m *HyperRep) backHidden(dst, db1, h, a []float64, inv float64) {
	D := m.features
	for q := range m.hidden {
		gs := inv * m.gh[q] * m.dsigma(h[q])
		if gs != 0 {
			vec.AddScaled(dst[q*D:(q+1)*D], gs, a)
			db1[q] += gs
		}
	}
}

// OuterGrad implements Bilevel: f = mean CE, ∂ₓf as InnerGrad without μ,
// ∂_λf by backpropagation into the hidden layer. dstX or dstLambda may be
// nil when that part is not wanted.
func (m *HyperRep) OuterGrad(dstX, dstLambda, x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	if dstX != nil {
		checkVec("dstX", dstX, m.DimX())
		clear(dstX)
	}
	if dstLambda != nil {
		checkVec("dstLambda", dstLambda, m.DimLambda())
		clear(dstLambda)
	}
	H, C, D := m.hidden, m.classes, m.features
	c := m.featuresOf(lambda, d)
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	var loss float64
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, C)
		h := m.row(c, lambda, i)
		loss += m.probs(x, h, y)
		clear(m.gh)
		for j := range C {
			g := m.p[j]
			if j == y {
				g--
			}
			if dstX != nil {
				floats.AddScaled(dstX[j*H:(j+1)*H], inv*g, h)
				dstX[C*H+j] += inv * g
			}
			floats.AddScaled(m.gh, g, x[j*H:(j+1)*H])
		}
		if dstLambda != nil {
			m.backHidden(dstLambda, dstLambda[H*D:], h, d.Row(i), inv)
		}
	}
	return loss * inv
}

// Accuracy implements Bilevel.
func (m *HyperRep) Accuracy(x, lambda []float64, d *Dataset, idx []int) float64 {
	m.check(x, lambda, d)
	c := m.featuresOf(lambda, d)
	n := batchSize(d, idx)
	right := 0
	for k := range n {
		i := rowIndex(d, idx, k)
		y := label(d, i, m.classes)
		m.probs(x, m.row(c, lambda, i), y)
		if argmax(m.z) == y {
			right++
		}
	}
	return float64(right) / float64(n)
}

// hyperRepHead builds HyperRep from the mlp architecture's shape: the head
// `hyper-representation`.
type hyperRepHead struct {
	Activation string `yaml:"activation" doc:"σ of the hidden layer: relu (the papers' baseline) or tanh"`
}

// Validate checks the head's parameters against the model kind.
func (h *hyperRepHead) Validate(arch string) error {
	if arch != "mlp" {
		return fmt.Errorf("head hyper-representation splits an mlp (hidden layer outer, output layer inner); model.kind is %s", arch)
	}
	if h.Activation != "relu" && h.Activation != "tanh" {
		return fmt.Errorf("activation must be relu or tanh, got %q", h.Activation)
	}
	return nil
}

// DimLambda is not known from the classes alone; the pdbo algorithm, the
// only user, refuses this head.
func (*hyperRepHead) DimLambda(int, HeadParams) int { return 0 }

func (h *hyperRepHead) New(newBase func() Classifier, _ HeadParams) Bilevel {
	mlp, ok := newBase().(*MLP)
	if !ok {
		panic("models: head hyper-representation needs model.kind mlp (validated before)")
	}
	return NewHyperRep(mlp.features, mlp.hidden, mlp.classes, mlp.l2, h.Activation != "tanh")
}

func init() {
	Heads.Register("hyper-representation",
		"Federated hyper-representation (FedNest, FBO-AggITD Sec. 5): with model.kind mlp, the hidden layer (W₁, b₁) is the outer variable λ and the output layer (W₂, b₂) the inner x; g = CE on train + (l2/2)‖x‖² (the mlp's l2 is μ, on the output layer only), f = CE on validation. For the federated bilevel algorithms (fednest, lfednest, fbo-aggitd), not pdbo.",
		func() Head { return &hyperRepHead{Activation: "relu"} })
}
