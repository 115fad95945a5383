package models

// The hand-written softmax, logistic and tanh-MLP models as they were before
// they became nn presets, kept for one commit as the reference that
// oldclassifiers_test.go compares the presets with bit for bit.

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/gemm"
)

// oldSoftmax is multinomial logistic regression with L2 regularization:
//
//	f(x) = mean_b CE(softmax(W a_b + c), y_b) + (L2/2)‖x‖²
//
// where a_b is the feature row and y_b the label of example b. All parameters,
// the bias c included, are regularized, so f is L2-strongly convex
// (Assumption 1 of the paper) and the lower-level problem has a unique
// solution.
//
// Layout of x: W (Classes×Features, row-major), then c (Classes).
//
// A *oldSoftmax holds scratch buffers: use it from one goroutine and Clone it
// for others.
type oldSoftmax struct {
	features, classes int
	l2                float64

	a []float64 // the rows of the last batchLogits (n×Features)
	n int
	s classifierScratch
}

// NewSoftmax returns a oldSoftmax model. It panics if features < 1,
// classes < 2 or l2 is negative or not finite: these come from an already
// validated configuration, so a bad value is a programmer error.
func newSoftmaxOld(features, classes int, l2 float64) *oldSoftmax {
	if features < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewSoftmax(features=%d, classes=%d): need features >= 1, classes >= 2", features, classes))
	}
	checkL2("NewSoftmax", l2)
	return &oldSoftmax{
		features: features,
		classes:  classes,
		l2:       l2,
	}
}

// Dim returns Classes·Features + Classes.
func (m *oldSoftmax) Dim() int { return m.classes*m.features + m.classes }

// Clone returns a oldSoftmax with the same shape and L2 and its own scratch.
func (m *oldSoftmax) Clone() Model { return newSoftmaxOld(m.features, m.classes, m.l2) }

// Init fills dst with N(0, 0.01²) draws from r. The problem is strongly
// convex, so the start does not change the solution; a small random one
// keeps clients that each draw from their own stream apart, which is what
// exercises consensus.
func (m *oldSoftmax) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.Dim())
	for i := range dst {
		dst[i] = 0.01 * r.NormFloat64()
	}
}

// check panics on any argument that does not fit the model.
func (m *oldSoftmax) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}

// Loss returns f(x) on the batch.
func (m *oldSoftmax) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return meanCrossEntropy(m, &m.s, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), with the same value Loss
// returns. Per row, ∂CE/∂z = p − e_y with p = softmax(z), so the row adds
// (p − e_y) aᵀ to the W block and p − e_y to the c block; over the batch
// the W block is the matrix product Gᵀ A.
func (m *oldSoftmax) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	return classifierGrad(m, &m.s, dst, x, d, idx)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *oldSoftmax) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return classifierAccuracy(m, &m.s, x, d, idx)
}

// oldLogistic is binary logistic regression with L2 regularization:
//
//	f(x) = mean_b [softplus(z_b) − y_b z_b] + (L2/2)‖x‖²,  z_b = wᵀa_b + c
//
// with labels y_b ∈ {0, 1}; the bracket is the cross-entropy of
// σ(z_b) = P(y = 1). The bias is regularized too, so f is L2-strongly
// convex. Datasets must have C = 2.
//
// Layout of x: w (Features), then c.
//
// A *oldLogistic holds scratch buffers: use it from one goroutine and Clone it
// for others.
type oldLogistic struct {
	features int
	l2       float64

	a []float64 // the rows of the last batchLogits (n×Features)
	n int
	s classifierScratch
}

// NewLogistic returns a oldLogistic model. It panics if features < 1 or l2 is
// negative or not finite.
func newLogisticOld(features int, l2 float64) *oldLogistic {
	if features < 1 {
		panic(fmt.Sprintf("models: NewLogistic(features=%d): need features >= 1", features))
	}
	checkL2("NewLogistic", l2)
	return &oldLogistic{features: features, l2: l2}
}

// Dim returns Features + 1.
func (m *oldLogistic) Dim() int { return m.features + 1 }

// Clone returns a oldLogistic with the same shape and L2.
func (m *oldLogistic) Clone() Model { return newLogisticOld(m.features, m.l2) }

// Init fills dst with N(0, 0.01²) draws from r, for the reason given at
// oldSoftmax.Init.
func (m *oldLogistic) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.Dim())
	for i := range dst {
		dst[i] = 0.01 * r.NormFloat64()
	}
}

func (m *oldLogistic) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, 2)
}

// chunk binds the batch rows lo…hi−1 and sizes the scratch for them:
// s.z holds one margin per row, s.v and s.g one more value each.
func (m *oldLogistic) chunk(d *datasets.Dataset, idx []int, lo, hi int) int {
	nb := hi - lo
	m.bindRows(batchRows(&m.s.a, d, idx, lo, hi), nb)
	m.s.grow(nb, 1)
	return nb
}

// Loss returns f(x) on the batch.
func (m *oldLogistic) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	n := batchSize(d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
		for b, z := range m.s.z[:nb] {
			y := label(d, rowIndex(d, idx, lo+b), 2)
			loss += softplus(z) - float64(y)*z
		}
	}
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x). Per row the gradient is
// (σ(z) − y)·[a; 1].
func (m *oldLogistic) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
		for b, z := range m.s.z[:nb] {
			y := float64(label(d, rowIndex(d, idx, lo+b), 2))
			loss += softplus(z) - y*z
			m.s.g[b] = inv * (sigmoid(z) - y)
		}
		m.addGrad(dst, m.s.g, 1)
	}
	floats.AddScaled(dst, m.l2, x)
	return loss/float64(n) + 0.5*m.l2*sumSquares(x)
}

// HVP writes dst = ∇²f(x)·u. Per row the Hessian is σ(1−σ)·[a; 1][a; 1]ᵀ,
// applied without forming it: σ(1−σ)·([a; 1]ᵀu)·[a; 1].
func (m *oldLogistic) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
		m.margins(m.s.v, 1, u)
		for b := range nb {
			label(d, rowIndex(d, idx, lo+b), 2)
			s := sigmoid(m.s.z[b])
			m.s.g[b] = inv * s * (1 - s) * m.s.v[b]
		}
		m.addGrad(dst, m.s.g, 1)
	}
	floats.AddScaled(dst, m.l2, u)
}

// Accuracy returns the fraction of rows where z > 0 exactly when y = 1.
func (m *oldLogistic) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	n := batchSize(d, idx)
	correct := 0
	for lo, hi := range chunks(n) {
		nb := m.chunk(d, idx, lo, hi)
		m.margins(m.s.z, 1, x)
		for b, z := range m.s.z[:nb] {
			y := label(d, rowIndex(d, idx, lo+b), 2)
			pred := 0
			if z > 0 {
				pred = 1
			}
			if pred == y {
				correct++
			}
		}
	}
	return float64(correct) / float64(n)
}

// oldMLP is a one-hidden-layer perceptron with tanh activation and softmax
// cross-entropy output, with L2 regularization of all parameters:
//
//	h = tanh(W₁a + b₁),  z = W₂h + b₂,
//	f(x) = mean_b CE(softmax(z_b), y_b) + (L2/2)‖x‖²
//
// f is not convex; it is the model for experiments beyond Assumption 1.
//
// Layout of x: W₁ (Hidden×Features, row-major), b₁ (Hidden),
// W₂ (Classes×Hidden, row-major), b₂ (Classes).
//
// An *oldMLP holds scratch buffers: use it from one goroutine and Clone it for
// others.
type oldMLP struct {
	features, hidden, classes int
	l2                        float64

	// The rows of the last batchLogits and per-row scratch (chunk rows
	// each), named after the quantity it holds; r* are the R-operator
	// (directional derivative along u) of the same quantity.
	a       []float64
	n       int
	hr      []float64 // n × 2·Hidden: h_b, then R{h_b}
	gh, rgh []float64 // n × Hidden: ∂/∂h, R{∂/∂h} (then those of the pre-activation)
	t       []float64 // n × Classes: W₂R{h}
	gg, gi  []float64 // 2n × Classes: the operands of batchVJPR, interleaved
	wu      []float64 // 2·Classes × Hidden: rows of U₂ and W₂, interleaved
	s       classifierScratch
}

// NewMLP returns an oldMLP. It panics if features < 1, hidden < 1, classes < 2
// or l2 is negative or not finite.
func newMLPOld(features, hidden, classes int, l2 float64) *oldMLP {
	if features < 1 || hidden < 1 || classes < 2 {
		panic(fmt.Sprintf("models: NewMLP(features=%d, hidden=%d, classes=%d): need features >= 1, hidden >= 1, classes >= 2",
			features, hidden, classes))
	}
	checkL2("NewMLP", l2)
	return &oldMLP{
		features: features, hidden: hidden, classes: classes, l2: l2,
	}
}

// Offsets of the blocks of x.
func (m *oldMLP) offB1() int { return m.hidden * m.features }
func (m *oldMLP) offW2() int { return m.offB1() + m.hidden }
func (m *oldMLP) offB2() int { return m.offW2() + m.classes*m.hidden }

// Dim returns Hidden·Features + Hidden + Classes·Hidden + Classes.
func (m *oldMLP) Dim() int { return m.offB2() + m.classes }

// Clone returns an oldMLP with the same shape and L2 and its own scratch.
func (m *oldMLP) Clone() Model { return newMLPOld(m.features, m.hidden, m.classes, m.l2) }

// Init draws W₁ from N(0, 1/Features) and W₂ from N(0, 1/Hidden) and sets
// the biases to 0. Variance 1/fan-in keeps the pre-activations of order one,
// where tanh is neither linear nor saturated; the random weights break the
// symmetry between hidden units, which zero biases do not need to.
func (m *oldMLP) Init(dst []float64, r *rand.Rand) {
	checkVec("dst", dst, m.Dim())
	clear(dst)
	s1 := 1 / math.Sqrt(float64(m.features))
	for i := range dst[:m.offB1()] {
		dst[i] = s1 * r.NormFloat64()
	}
	s2 := 1 / math.Sqrt(float64(m.hidden))
	for i := m.offW2(); i < m.offB2(); i++ {
		dst[i] = s2 * r.NormFloat64()
	}
}

func (m *oldMLP) check(x []float64, d *datasets.Dataset) {
	checkVec("x", x, m.Dim())
	checkData(d, m.features, m.classes)
}

// Loss returns f(x) on the batch.
func (m *oldMLP) Loss(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return meanCrossEntropy(m, &m.s, x, d, idx) + 0.5*m.l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x), by backpropagation:
//
//	g_z = p − e_y,  ∂W₂ = g_z hᵀ,  ∂b₂ = g_z,
//	g_h = W₂ᵀg_z,  g_s = g_h ⊙ (1 − h²),  ∂W₁ = g_s aᵀ,  ∂b₁ = g_s.
func (m *oldMLP) Grad(dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	return classifierGrad(m, &m.s, dst, x, d, idx)
}

// HVP writes dst = ∇²f(x)·u with Pearlmutter's R-operator: each quantity q
// of the forward and backward pass of Grad gets R{q}, its derivative along
// u = (U₁, u_b₁, U₂, u_b₂), and R{∂x} is the product. Forward:
//
//	R{s} = U₁a + u_b₁,  R{h} = (1 − h²) ⊙ R{s},  R{z} = U₂h + W₂R{h} + u_b₂,
//	R{g_z} = R{p} = p ⊙ R{z} − p (pᵀR{z});
//
// backward:
//
//	R{∂W₂} = R{g_z} hᵀ + g_z R{h}ᵀ,  R{∂b₂} = R{g_z},
//	R{g_h} = U₂ᵀg_z + W₂ᵀR{g_z},
//	R{g_s} = R{g_h} ⊙ (1 − h²) − 2 g_h ⊙ h ⊙ R{h},
//	R{∂W₁} = R{g_s} aᵀ,  R{∂b₁} = R{g_s}.
func (m *oldMLP) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	classifierHVP(m, &m.s, dst, x, d, idx, u)
}

// Accuracy returns the fraction of rows whose largest logit is the label.
func (m *oldMLP) Accuracy(x []float64, d *datasets.Dataset, idx []int) float64 {
	m.check(x, d)
	return classifierAccuracy(m, &m.s, x, d, idx)
}

// oldSoftmax: z = W a + c is linear in x, so ∇²z_j = 0.

func (m *oldSoftmax) shape() (int, int) { return m.features, m.classes }
func (m *oldSoftmax) l2Rate() float64   { return m.l2 }

func (m *oldSoftmax) bindRows(A []float64, n int) { m.a, m.n = A, n }

func (m *oldSoftmax) batchLogits(Z, x, A []float64, n int) {
	m.bindRows(A, n)
	D, C := m.features, m.classes
	gemm.DotNT(n, C, D, A, D, x, D, Z, C)
	addToRows(Z[:n*C], x[C*D:])
}

func (m *oldSoftmax) batchJVP(V, x, u []float64) {
	D, C := m.features, m.classes
	gemm.DotNT(m.n, C, D, m.a, D, u, D, V, C)
	addToRows(V[:m.n*C], u[C*D:])
}

// batchVJP adds Gᵀ A to the W block, the products of each output taken
// in row order as the row loop's AddScaled took them.
func (m *oldSoftmax) batchVJP(dst, x, G []float64) {
	D, C := m.features, m.classes
	gemm.AccTN(C, D, m.n, G, C, m.a, D, dst, D)
	accumulateRows(dst[C*D:], G[:m.n*C])
}

func (m *oldSoftmax) batchVJPR(dst, x, u, G, RG []float64) { m.batchVJP(dst, x, RG) }

// oldLogistic: z = [0, wᵀa + c], linear in x; the constant logit 0 has no
// parameters, so G_b0 never reaches dst.

func (m *oldLogistic) shape() (int, int) { return m.features, 2 }
func (m *oldLogistic) l2Rate() float64   { return m.l2 }

func (m *oldLogistic) bindRows(A []float64, n int) { m.a, m.n = A, n }

// margins writes wᵀa_b + c of the bound rows into every ld-th element of
// dst from dst[0], with w = p[:D], c = p[D].
func (m *oldLogistic) margins(dst []float64, ld int, p []float64) {
	D := m.features
	gemm.DotNT(m.n, 1, D, m.a, D, p[:D], D, dst, ld)
	for b := range m.n {
		dst[b*ld] += p[D]
	}
}

func (m *oldLogistic) batchLogits(Z, x, A []float64, n int) {
	m.bindRows(A, n)
	m.margins(Z[1:], 2, x)
	for b := range n {
		Z[2*b] = 0
	}
}

func (m *oldLogistic) batchJVP(V, x, u []float64) {
	m.margins(V[1:], 2, u)
	for b := range m.n {
		V[2*b] = 0
	}
}

func (m *oldLogistic) batchVJP(dst, x, G []float64) { m.addGrad(dst, G[1:], 2) }

func (m *oldLogistic) batchVJPR(dst, x, u, G, RG []float64) { m.batchVJP(dst, x, RG) }

// addGrad adds Σ_b g_b [a_b; 1] to dst, g_b = g[b·ld].
func (m *oldLogistic) addGrad(dst, g []float64, ld int) {
	D := m.features
	gemm.AccTN(1, D, m.n, g, ld, m.a, D, dst[:D], D)
	for b := range m.n {
		dst[D] += g[b*ld]
	}
}

// oldMLP: the forward, backward and R-passes of oldMLP.HVP, split at the logits.

func (m *oldMLP) shape() (int, int) { return m.features, m.classes }
func (m *oldMLP) l2Rate() float64   { return m.l2 }

// batchLogits leaves h_b = tanh(W₁a_b + b₁) in the first half of row b of
// m.hr.
func (m *oldMLP) batchLogits(Z, x, A []float64, n int) {
	D, H, C := m.features, m.hidden, m.classes
	m.a, m.n = A, n
	m.hr = resize(m.hr, 2*n*H)
	b1 := x[m.offB1():m.offW2()]
	gemm.DotNT(n, H, D, A, D, x[:H*D], D, m.hr, 2*H)
	for b := range n {
		h := m.hr[2*b*H : (2*b+1)*H]
		for q := range H {
			h[q] = math.Tanh(h[q] + b1[q])
		}
	}
	// z = W₂h + b₂: the dot product first, then the bias, as the row
	// form's floats.Dot(…) + b₂ rounded them.
	gemm.DotNT(n, C, H, m.hr, 2*H, x[m.offW2():m.offB2()], H, Z, C)
	addToRows(Z[:n*C], x[m.offB2():])
}

// batchJVP leaves R{h_b} = (1 − h²) ⊙ (U₁a_b + u_b₁) in the second half of
// row b of m.hr and writes R{z_b} = U₂h_b + u_b₂ + W₂R{h_b}.
func (m *oldMLP) batchJVP(V, x, u []float64) {
	D, H, C, n := m.features, m.hidden, m.classes, m.n
	ub1 := u[m.offB1():m.offW2()]
	gemm.DotNT(n, H, D, m.a, D, u[:H*D], D, m.hr[H:], 2*H)
	for b := range n {
		h, rh := m.hr[2*b*H:(2*b+1)*H], m.hr[(2*b+1)*H:(2*b+2)*H]
		for q := range H {
			rh[q] = (1 - h[q]*h[q]) * (rh[q] + ub1[q])
		}
	}
	gemm.DotNT(n, C, H, m.hr, 2*H, u[m.offW2():m.offB2()], H, V, C)
	addToRows(V[:n*C], u[m.offB2():])
	m.t = resize(m.t, n*C)
	gemm.DotNT(n, C, H, m.hr[H:], 2*H, x[m.offW2():m.offB2()], H, m.t, C)
	for i, t := range m.t {
		V[i] += t
	}
}

// batchVJP backpropagates G = ∂ℓ/∂z as in oldMLP.Grad:
//
//	∂W₂ += Gᵀ H,  ∂b₂ += Σ_b G_b,  G_h = G W₂,  G_s = G_h ⊙ (1 − h²),
//	∂W₁ += G_sᵀ A,  ∂b₁ += Σ_b G_s,b.
func (m *oldMLP) batchVJP(dst, x, G []float64) {
	D, H, C, n := m.features, m.hidden, m.classes, m.n
	w2 := x[m.offW2():m.offB2()]
	db1, dw2, db2 := dst[m.offB1():m.offW2()], dst[m.offW2():m.offB2()], dst[m.offB2():]
	gemm.AccTN(C, H, n, G, C, m.hr, 2*H, dw2, H)
	accumulateRows(db2, G[:n*C])
	m.gh = resize(m.gh, n*H)
	clear(m.gh)
	gemm.AccNN(n, H, C, G, C, w2, H, m.gh, H)
	for b := range n {
		h, gs := m.hr[2*b*H:(2*b+1)*H], m.gh[b*H:(b+1)*H]
		for q := range H {
			gs[q] = gs[q] * (1 - h[q]*h[q])
		}
	}
	gemm.AccTN(H, D, n, m.gh, H, m.a, D, dst[:H*D], D)
	accumulateRows(db1, m.gh)
}

// batchVJPR is the backward R-pass of oldMLP.HVP with g_z = G and
// R{g_z} = RG. The row form added, per row and class j, R{g_z}_j·h and
// then g_z,j·R{h} to row j of ∂W₂, and g_z,j·U₂_j and then R{g_z}_j·W₂_j to
// R{g_h}: the products below interleave their operands along k the same
// way, so each output takes the same products in the same order.
func (m *oldMLP) batchVJPR(dst, x, u, G, RG []float64) {
	D, H, C, n := m.features, m.hidden, m.classes, m.n
	w2, u2 := x[m.offW2():m.offB2()], u[m.offW2():m.offB2()]
	db1, dw2, db2 := dst[m.offB1():m.offW2()], dst[m.offW2():m.offB2()], dst[m.offB2():]

	// R{∂W₂} = Σ_b R{g_z,b} h_bᵀ + g_z,b R{h_b}ᵀ: rows 2b and 2b+1 of gg
	// are RG_b and G_b, those of m.hr (as 2n×H) h_b and R{h_b}.
	m.gg = resize(m.gg, 2*n*C)
	for b := range n {
		copy(m.gg[2*b*C:(2*b+1)*C], RG[b*C:(b+1)*C])
		copy(m.gg[(2*b+1)*C:(2*b+2)*C], G[b*C:(b+1)*C])
	}
	gemm.AccTN(C, H, 2*n, m.gg, C, m.hr, H, dw2, H)
	accumulateRows(db2, RG[:n*C])

	// g_h = G W₂ and R{g_h} = Σ_j g_z,j U₂_j + R{g_z}_j W₂_j, the latter
	// with (G_bj, RG_bj) interleaved against rows (U₂_j, W₂_j).
	m.gh = resize(m.gh, n*H)
	m.rgh = resize(m.rgh, n*H)
	m.gi = resize(m.gi, 2*n*C)
	m.wu = resize(m.wu, 2*C*H)
	for b := range n {
		for j := range C {
			m.gi[2*(b*C+j)] = G[b*C+j]
			m.gi[2*(b*C+j)+1] = RG[b*C+j]
		}
	}
	for j := range C {
		copy(m.wu[2*j*H:(2*j+1)*H], u2[j*H:(j+1)*H])
		copy(m.wu[(2*j+1)*H:(2*j+2)*H], w2[j*H:(j+1)*H])
	}
	clear(m.gh)
	clear(m.rgh)
	gemm.AccNN(n, H, C, G, C, w2, H, m.gh, H)
	gemm.AccNN(n, H, 2*C, m.gi, 2*C, m.wu, H, m.rgh, H)

	// R{g_s} = R{g_h} ⊙ (1 − h²) − 2 g_h ⊙ h ⊙ R{h}, into m.rgh.
	for b := range n {
		h, rh := m.hr[2*b*H:(2*b+1)*H], m.hr[(2*b+1)*H:(2*b+2)*H]
		gh, rgh := m.gh[b*H:(b+1)*H], m.rgh[b*H:(b+1)*H]
		for q := range H {
			rgh[q] = rgh[q]*(1-h[q]*h[q]) - 2*gh[q]*h[q]*rh[q]
		}
	}
	gemm.AccTN(H, D, n, m.rgh, H, m.a, D, dst[:H*D], D)
	accumulateRows(db1, m.rgh)
}

// HVP writes dst = ∇²f(x)·u. Per row the gradient is (p − e_y) ⊗ [a; 1], and
// its derivative along u = (U, u_c) is R{p} ⊗ [a; 1] with
//
//	R{z} = U a + u_c,  R{p} = p ⊙ R{z} − p (pᵀR{z})
//
// (the softmax Jacobian diag(p) − ppᵀ applied to R{z}).
func (m *oldSoftmax) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	classifierHVP(m, &m.s, dst, x, d, idx, u)
}
