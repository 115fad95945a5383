package models

import (
	"iter"
	"math"

	"hgpsim/datasets"
	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// Classifier is a SecondOrder model whose per-row loss is the softmax
// cross-entropy of logits z(x; a) ∈ R^C of the row's features a:
//
//	f(x) = mean_b [lse(z_b) − z_b,y_b] + (L2/2)‖x‖².
//
// Softmax (z = W a + c), MLP (z = W₂ tanh(W₁a + b₁) + b₂) and Logistic
// (z = [0, wᵀa + c], whose cross-entropy is softplus(z₁) − y z₁) implement it.
//
// The bilevel problems (LabelWeights, Ensemble, MTLDA) and SampleWeighted
// build their losses from these primitives over a minibatch of n rows
// gathered into a contiguous n×D matrix A: the logits, their
// Jacobian-vector product (forward R-operator), their vector-Jacobian
// product (backpropagation) and the R-operator of that backpropagation.
// Each is a few matrix products over the whole batch (package
// internal/gemm), whose summation orders are those of the row-by-row
// level-1 loops the models were first written with, so the batch form
// changes no bit. The primitives are unexported, so the set of Classifiers
// is closed to this package.
type Classifier interface {
	SecondOrder

	// shape returns the number of features and classes the model fits.
	shape() (features, classes int)
	// l2Rate returns the model's regularization rate L2.
	l2Rate() float64
	// batchLogits writes z(x; a_b) of the n rows of A (n×D) into the rows
	// of Z (n×C), and keeps A and what the following batchJVP, batchVJP
	// and batchVJPR need. A must not change until they have run.
	batchLogits(Z, x, A []float64, n int)
	// batchJVP writes V_b = (∂z_b/∂x)·u into the rows of V (n×C), for the
	// rows of the last batchLogits (with the same x), and keeps what
	// batchVJPR needs.
	batchJVP(V, x, u []float64)
	// batchVJP adds Σ_b (∂z_b/∂x)ᵀG_b to dst (length Dim), for the rows of
	// the last batchLogits; G is n×C.
	batchVJP(dst, x, G []float64)
	// batchVJPR adds Σ_b [(∂z_b/∂x)ᵀRG_b + Σ_j G_bj ∇²z_bj·u] to dst: the
	// derivative along u of batchVJP(x, G) when G changes at the rate RG.
	// It needs batchLogits and then batchJVP(u) of the same x.
	batchVJPR(dst, x, u, G, RG []float64)
}

// Every model of the package is a Classifier.
var (
	_ Classifier = (*Softmax)(nil)
	_ Classifier = (*Logistic)(nil)
	_ Classifier = (*MLP)(nil)
)

// Softmax: z = W a + c is linear in x, so ∇²z_j = 0.

func (m *Softmax) shape() (int, int) { return m.features, m.classes }
func (m *Softmax) l2Rate() float64   { return m.l2 }

func (m *Softmax) bindRows(A []float64, n int) { m.a, m.n = A, n }

func (m *Softmax) batchLogits(Z, x, A []float64, n int) {
	m.bindRows(A, n)
	D, C := m.features, m.classes
	gemm.DotNT(n, C, D, A, D, x, D, Z, C)
	addToRows(Z[:n*C], x[C*D:])
}

func (m *Softmax) batchJVP(V, x, u []float64) {
	D, C := m.features, m.classes
	gemm.DotNT(m.n, C, D, m.a, D, u, D, V, C)
	addToRows(V[:m.n*C], u[C*D:])
}

// batchVJP adds Gᵀ A to the W block, the products of each output taken
// in row order as the row loop's AddScaled took them.
func (m *Softmax) batchVJP(dst, x, G []float64) {
	D, C := m.features, m.classes
	gemm.AccTN(C, D, m.n, G, C, m.a, D, dst, D)
	accumulateRows(dst[C*D:], G[:m.n*C])
}

func (m *Softmax) batchVJPR(dst, x, u, G, RG []float64) { m.batchVJP(dst, x, RG) }

// addToRows adds v to every row of M (len(v) columns).
func addToRows(M, v []float64) {
	for b := 0; b < len(M); b += len(v) {
		row := M[b : b+len(v)]
		for j := range row {
			row[j] += v[j]
		}
	}
}

// accumulateRows adds the rows of M (len(dst) columns) to dst, in row
// order.
func accumulateRows(dst, M []float64) {
	for b := 0; b < len(M); b += len(dst) {
		row := M[b : b+len(dst)]
		for j := range dst {
			dst[j] += row[j]
		}
	}
}

// Logistic: z = [0, wᵀa + c], linear in x; the constant logit 0 has no
// parameters, so G_b0 never reaches dst.

func (m *Logistic) shape() (int, int) { return m.features, 2 }
func (m *Logistic) l2Rate() float64   { return m.l2 }

func (m *Logistic) bindRows(A []float64, n int) { m.a, m.n = A, n }

// margins writes wᵀa_b + c of the bound rows into every ld-th element of
// dst from dst[0], with w = p[:D], c = p[D].
func (m *Logistic) margins(dst []float64, ld int, p []float64) {
	D := m.features
	gemm.DotNT(m.n, 1, D, m.a, D, p[:D], D, dst, ld)
	for b := range m.n {
		dst[b*ld] += p[D]
	}
}

func (m *Logistic) batchLogits(Z, x, A []float64, n int) {
	m.bindRows(A, n)
	m.margins(Z[1:], 2, x)
	for b := range n {
		Z[2*b] = 0
	}
}

func (m *Logistic) batchJVP(V, x, u []float64) {
	m.margins(V[1:], 2, u)
	for b := range m.n {
		V[2*b] = 0
	}
}

func (m *Logistic) batchVJP(dst, x, G []float64) { m.addGrad(dst, G[1:], 2) }

func (m *Logistic) batchVJPR(dst, x, u, G, RG []float64) { m.batchVJP(dst, x, RG) }

// addGrad adds Σ_b g_b [a_b; 1] to dst, g_b = g[b·ld].
func (m *Logistic) addGrad(dst, g []float64, ld int) {
	D := m.features
	gemm.AccTN(1, D, m.n, g, ld, m.a, D, dst[:D], D)
	for b := range m.n {
		dst[D] += g[b*ld]
	}
}

// MLP: the forward, backward and R-passes of MLP.HVP, split at the logits.

func (m *MLP) shape() (int, int) { return m.features, m.classes }
func (m *MLP) l2Rate() float64   { return m.l2 }

// batchLogits leaves h_b = tanh(W₁a_b + b₁) in the first half of row b of
// m.hr.
func (m *MLP) batchLogits(Z, x, A []float64, n int) {
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
func (m *MLP) batchJVP(V, x, u []float64) {
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

// batchVJP backpropagates G = ∂ℓ/∂z as in MLP.Grad:
//
//	∂W₂ += Gᵀ H,  ∂b₂ += Σ_b G_b,  G_h = G W₂,  G_s = G_h ⊙ (1 − h²),
//	∂W₁ += G_sᵀ A,  ∂b₁ += Σ_b G_s,b.
func (m *MLP) batchVJP(dst, x, G []float64) {
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

// batchVJPR is the backward R-pass of MLP.HVP with g_z = G and
// R{g_z} = RG. The row form added, per row and class j, R{g_z}_j·h and
// then g_z,j·R{h} to row j of ∂W₂, and g_z,j·U₂_j and then R{g_z}_j·W₂_j to
// R{g_h}: the products below interleave their operands along k the same
// way, so each output takes the same products in the same order.
func (m *MLP) batchVJPR(dst, x, u, G, RG []float64) {
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

// batchChunk bounds the rows a model multiplies at once: larger batches
// run in chunks of this many rows, in order, so every output still receives
// its rows' contributions in batch order. Each model value keeps a chunk of
// gathered rows (batchChunk × D; 400 KB for Fashion-MNIST) for every
// client; 64 rows keep that small, and at batch 128 the products ran as
// fast in chunks of 64 as in one of 128, within the noise of the shared
// machine.
const batchChunk = 64

// chunks yields the row ranges [lo, hi) of a batch of n rows in order,
// batchChunk rows at a time.
func chunks(n int) iter.Seq2[int, int] {
	return func(yield func(lo, hi int) bool) {
		for lo := 0; lo < n; lo += batchChunk {
			if !yield(lo, min(lo+batchChunk, n)) {
				return
			}
		}
	}
}

// batchRows returns the features of the batch rows lo…hi−1 (positions in
// idx) as a contiguous (hi−lo)×D matrix: a view of d.X when idx is nil and
// d is float64, otherwise the rows gathered (and decoded, if d is coded)
// into *buf, which grows as needed.
func batchRows(buf *[]float64, d *datasets.Dataset, idx []int, lo, hi int) []float64 {
	if idx == nil {
		if !d.Coded() {
			return d.X[lo*d.D : hi*d.D]
		}
		*buf = resize(*buf, (hi-lo)*d.D)
		d.GatherRange(*buf, lo, hi)
		return *buf
	}
	*buf = resize(*buf, (hi-lo)*d.D)
	d.Gather(*buf, idx[lo:hi])
	return *buf
}

// classifierScratch holds one chunk's rows and per-row buffers for the
// batch loops below; a model embeds one so that its calls do not allocate
// once the largest chunk has been seen.
type classifierScratch struct {
	a          []float64 // gathered rows (chunk × D)
	z, g, v, r []float64 // chunk × C: logits (then probabilities), ∂ℓ/∂z, R{z}, R{∂ℓ/∂z}
}

// grow sizes the per-row buffers for nb rows of C classes.
func (s *classifierScratch) grow(nb, C int) {
	s.z = resize(s.z, nb*C)
	s.g = resize(s.g, nb*C)
	s.v = resize(s.v, nb*C)
	s.r = resize(s.r, nb*C)
}

// meanCrossEntropy is (1/|b|) Σ_b −log softmax(z_b)_{y_b} over the batch.
func meanCrossEntropy(m Classifier, s *classifierScratch, x []float64, d *datasets.Dataset, idx []int) float64 {
	_, C := m.shape()
	n := batchSize(d, idx)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		for b := range nb {
			y := label(d, rowIndex(d, idx, lo+b), C)
			z := s.z[b*C : (b+1)*C]
			// −log softmax(z)_y = lse(z) − z_y.
			loss += vec.LogSumExp(z) - z[y]
		}
	}
	return loss / float64(n)
}

// classifierAccuracy is the fraction of batch rows whose largest logit is
// the label.
func classifierAccuracy(m Classifier, s *classifierScratch, x []float64, d *datasets.Dataset, idx []int) float64 {
	_, C := m.shape()
	n := batchSize(d, idx)
	correct := 0
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		correct += hits(s.z, C, d, idx, lo, nb)
	}
	return float64(correct) / float64(n)
}

// classifierGrad writes ∇f(x) into dst and returns f(x): per row
// ∂CE/∂z = p − e_y with p = softmax(z), scaled by 1/n once, backpropagated
// chunk by chunk.
func classifierGrad(m Classifier, s *classifierScratch, dst, x []float64, d *datasets.Dataset, idx []int) float64 {
	_, C := m.shape()
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	var loss float64
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		for b := range nb {
			y := label(d, rowIndex(d, idx, lo+b), C)
			z, gb := s.z[b*C:(b+1)*C], s.g[b*C:(b+1)*C]
			lse := vec.LogSumExp(z)
			loss += lse - z[y]
			for j := range C {
				g := math.Exp(z[j] - lse)
				if j == y {
					g--
				}
				g *= inv // the 1/n of the mean, applied once here for every block
				gb[j] = g
			}
		}
		m.batchVJP(dst, x, s.g[:nb*C])
	}
	l2 := m.l2Rate()
	vec.AddScaled(dst, l2, x)
	return loss/float64(n) + 0.5*l2*sumSquares(x)
}

// classifierHVP writes dst = ∇²f(x)·u by the R-operator: per row
//
//	R{z} = (∂z/∂x)·u,  R{p} = p ⊙ R{z} − p (pᵀR{z}),
//
// and backpropagates g_z = (p − e_y)/n with R{g_z} = R{p}/n.
func classifierHVP(m Classifier, s *classifierScratch, dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	_, C := m.shape()
	n := batchSize(d, idx)
	inv := 1 / float64(n)
	clear(dst)
	for lo, hi := range chunks(n) {
		nb := hi - lo
		s.grow(nb, C)
		m.batchLogits(s.z, x, batchRows(&s.a, d, idx, lo, hi), nb)
		m.batchJVP(s.v, x, u)
		for b := range nb {
			y := label(d, rowIndex(d, idx, lo+b), C)
			p, rz := s.z[b*C:(b+1)*C], s.v[b*C:(b+1)*C]
			gb, rgb := s.g[b*C:(b+1)*C], s.r[b*C:(b+1)*C]
			lse := vec.LogSumExp(p)
			var sum float64
			for j := range C {
				p[j] = math.Exp(p[j] - lse)
				sum += p[j] * rz[j]
			}
			for j := range C {
				gz := p[j]
				if j == y {
					gz--
				}
				gz *= inv
				gb[j] = gz
				rgb[j] = inv * p[j] * (rz[j] - sum)
			}
		}
		m.batchVJPR(dst, x, u, s.g[:nb*C], s.r[:nb*C])
	}
	vec.AddScaled(dst, m.l2Rate(), u)
}
