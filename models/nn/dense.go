package nn

import (
	"fmt"
	"math/rand/v2"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// dense is Y = X·Wᵀ + 1bᵀ on the batch, X being n × In (each sample's
// input flattened) and Y n × Out; every pass is one or two matrix products
// over the whole batch.
type dense[F gemm.Float] struct {
	ni, no int
	rows   bool // Spec.RowOrder: the tangent sums of a loop over samples
	tmp    []F  // n × Out: the second product of rforward
	gyT    []F  // 2 × Out × n: gY and R{gY} transposed (wide layers)
	gxT    []F  // In × n: an input gradient transposed (inputGradT)
	ord    *rowOrderScratch[F]
}

// wideOut is the fewest outputs of a dense layer whose backward products
// take gY transposed (dense.weightGrad, dense.inputGrad).
const wideOut = 256

func newDense[F gemm.Float](sp Spec, in Shape) (layer[F], error) {
	if sp.Out < 1 || sp.Out > MaxActivation {
		return nil, fmt.Errorf("%d outputs: must be in [1, %d]", sp.Out, MaxActivation)
	}
	l := &dense[F]{ni: in.Size(), no: sp.Out, rows: sp.RowOrder}
	if l.rows {
		l.ord = &rowOrderScratch[F]{}
	}
	return l, nil
}

func (l *dense[F]) out() Shape   { return Shape{l.no, 1, 1} }
func (l *dense[F]) params() int  { return l.no*l.ni + l.no }
func (l *dense[F]) flops() int64 { return 2 * int64(l.no) * int64(l.ni) }
func (l *dense[F]) memory(n int) int64 {
	e := vec.ElemSize[F]()
	if l.rows {
		return e * (int64(n)*(3*int64(l.no)+2*int64(l.ni)+2*int64(l.no)) + 2*int64(l.no)*int64(l.ni))
	}
	if l.inputGradT() {
		return e * int64(n) * (3*int64(l.no) + int64(l.ni))
	}
	if l.wide() {
		return e * int64(n) * 3 * int64(l.no)
	}
	return e * int64(n) * int64(l.no)
}

func (l *dense[F]) reserve(n int) {
	if len(l.tmp) < n*l.no {
		l.tmp = make([]F, n*l.no)
		if l.wide() {
			l.gyT = make([]F, 2*n*l.no)
		}
		if l.inputGradT() {
			l.gxT = make([]F, n*l.ni)
		}
		if l.rows {
			l.ord.reserve(n, l.ni, l.no)
		}
	}
}

// wide reports whether the backward products take gY transposed. A
// row-order layer never does: its products are those of the row loop's
// matrix form, as recorded.
func (l *dense[F]) wide() bool { return l.no >= wideOut && !l.rows }

// transposed returns gᵀ (Out × n) for a wide layer, in slot s (0 or 1) of
// l.gyT, and g itself otherwise: the backward products take what this
// returns.
func (l *dense[F]) transposed(g []F, n, s int) []F {
	if !l.wide() {
		return g
	}
	t := l.gyT[s*l.no*n : (s+1)*l.no*n]
	// Eight samples at a time: each output row of t then gets a run of
	// eight values, where one sample at a time stores to Out lines n
	// values apart (2048 of them in fedem-cnn's dense layer).
	b := 0
	for ; b+8 <= n; b += 8 {
		rows := g[b*l.no : (b+8)*l.no]
		for o := range l.no {
			d := t[o*n+b : o*n+b+8]
			d[0], d[1], d[2], d[3] = rows[o], rows[l.no+o], rows[2*l.no+o], rows[3*l.no+o]
			d[4], d[5], d[6], d[7] = rows[4*l.no+o], rows[5*l.no+o], rows[6*l.no+o], rows[7*l.no+o]
		}
	}
	for ; b < n; b++ {
		row := g[b*l.no : (b+1)*l.no]
		for o, v := range row {
			t[o*n+b] = v
		}
	}
	return t
}

// weightGrad adds gᵀX (Out × In) to gw, g as transposed returns it. With
// gᵀ the product is AccNN, whose A rows are then contiguous over the
// samples, where AccTN packs strided slivers of g: the same chain order
// and bits, measured 40.3 → 44.5 GFLOP/s at 2048 × 1024 × 128 (the
// transpose is 1/1024 of the product's work).
func (l *dense[F]) weightGrad(gw, g, x []F, n int) {
	if !l.wide() {
		gemm.AccTN(l.no, l.ni, n, g, l.no, x, l.ni, gw, l.ni)
		return
	}
	gemm.AccNN(l.no, l.ni, n, g, n, x, l.ni, gw, l.ni)
}

// inputGrad writes gx = g₁·W₁ + g₂·W₂ + … (n × In), one chain over the
// terms in order, each over the Out outputs, for pairs (g_t, W_t) of g as
// inputTerm returns it and a weight matrix. Where inputGradT, it forms
// gxᵀ = Σ W_tᵀ·g_tᵀ by AccTN and transposes it: the same products in the
// same order (a·b = b·a exactly), measured 38 → 44 GFLOP/s in float64 at
// 1024 ← 2048, batch 128, where gY·W packs slivers of the whole of W
// (16 MB, a leading dimension of 8 kB) for only 128 rows of gY.
func (l *dense[F]) inputGrad(gx []F, n int, terms ...[]F) {
	if !l.inputGradT() {
		clear(gx[:n*l.ni])
		for t := 0; t < len(terms); t += 2 {
			l.accNN(gx, terms[t], terms[t+1], n)
		}
		return
	}
	gxT := l.gxT[:l.ni*n]
	clear(gxT)
	for t := 0; t < len(terms); t += 2 {
		gemm.AccTN(l.ni, n, l.no, terms[t+1], l.ni, terms[t], n, gxT, n)
	}
	for b := range n {
		row := gx[b*l.ni : (b+1)*l.ni]
		for i := range row {
			row[i] = gxT[i*n+b]
		}
	}
}

// inputGradT reports whether inputGrad forms gXᵀ from gYᵀ. In float32 it
// does not: at 1024 ← 2048, batch 128 (Zen 5), gY·W by AccNN took 2.7–2.8
// ms against AccTN's 2.9–3.0 on 512-bit kernels and 5.0–5.1 against
// 5.3–5.4 on 256-bit ones, where in float64 AccTN keeps a small lead on
// 512-bit kernels (5.6–5.7 ms against 5.8–5.9; 10.4–10.6 against
// 10.2–10.4 on 256-bit ones).
func (l *dense[F]) inputGradT() bool { return l.wide() && vec.Is64[F]() }

// inputTerm returns, of gY and the g that transposed returned for it, the
// one inputGrad takes.
func (l *dense[F]) inputTerm(gy, g []F) []F {
	if l.inputGradT() {
		return g
	}
	return gy
}

// init draws from U(−1/√In, 1/√In), PyTorch's default for Linear.
func (l *dense[F]) init(w []F, r *rand.Rand) { uniformInit(w, l.ni, r) }

// addRows adds the row vector v to each of the n rows of y.
func addRows[F gemm.Float](y, v []F, n int) {
	for b := range n {
		row := y[b*len(v) : (b+1)*len(v)]
		for j, t := range v {
			row[j] += t
		}
	}
}

// addColumnSums adds the column sums of the n × len(gb) matrix g to gb,
// summing in sample order.
func addColumnSums[F gemm.Float](gb, g []F, n int) {
	for b := range n {
		row := g[b*len(gb) : (b+1)*len(gb)]
		for j, v := range row {
			gb[j] += v
		}
	}
}

// kSlice is the depth of the slices in which accNN splits its products.
const kSlice = 128

// accNN is gemm.AccNN(n, In, Out, g, Out, w, In, gx, In) for the input
// gradients, called on slices of kSlice outputs (k) in increasing order,
// which keeps each sum's chain order and so its bits. The kernel sweeps
// all of A's k panel once per 64 columns of B: for a wide layer (1024 →
// 2048 at batch 128, A 2 MB) that is out of L2 each time, a 128-deep
// slice of A (128 kB) is not. Measured 19.3 → 15.4–15.7 ms.
func (l *dense[F]) accNN(gx, g, w []F, n int) {
	for p0 := 0; p0 < l.no; p0 += kSlice {
		kb := min(kSlice, l.no-p0)
		gemm.AccNN(n, l.ni, kb, g[p0:], l.no, w[p0*l.ni:], l.ni, gx, l.ni)
	}
}

// forward uses DotNT, which handles few outputs (a classifier's) far
// better than the accumulating kernels; the bias is added after.
func (l *dense[F]) forward(y, x, w []F, n int) {
	wt, bias := w[:l.no*l.ni], w[l.no*l.ni:]
	gemm.DotNT(n, l.no, l.ni, x, l.ni, wt, l.ni, y, l.no)
	addRows(y, bias, n)
}

func (l *dense[F]) backward(gx, gw, gy, x, _, w []F, n int) {
	wt := w[:l.no*l.ni]
	g := l.transposed(gy, n, 0)
	l.weightGrad(gw[:l.no*l.ni], g, x, n)
	addColumnSums(gw[l.no*l.ni:], gy, n)
	if gx != nil {
		l.inputGrad(gx, n, l.inputTerm(gy, g), wt)
	}
}

// rforward: R{Y} = X·Uᵀ + R{X}·Wᵀ + 1u_bᵀ, each product by DotNT.
func (l *dense[F]) rforward(ry, rx, x, _, w, u []F, n int) {
	wt, ut, ub := w[:l.no*l.ni], u[:l.no*l.ni], u[l.no*l.ni:]
	ry = ry[:n*l.no]
	gemm.DotNT(n, l.no, l.ni, x, l.ni, ut, l.ni, ry, l.no)
	if l.rows {
		addRows(ry, ub, n)
	}
	if rx != nil {
		tmp := l.tmp[:n*l.no]
		gemm.DotNT(n, l.no, l.ni, rx, l.ni, wt, l.ni, tmp, l.no)
		for i, t := range tmp {
			ry[i] += t
		}
	}
	if !l.rows {
		addRows(ry, ub, n)
	}
}

// rbackward: R{gW} = R{gY}ᵀX + gYᵀR{X}, R{gb} = R{gY}ᵀ1,
// R{gX} = R{gY}·W + gY·U.
func (l *dense[F]) rbackward(gx, rgx, rgw, gy, rgy, x, rx, _, _, w, u []F, n int) {
	if l.rows {
		l.rbackwardRows(gx, rgx, rgw, gy, rgy, x, rx, w, u, n)
		return
	}
	wt, ut := w[:l.no*l.ni], u[:l.no*l.ni]
	rgwt := rgw[:l.no*l.ni]
	rg := l.transposed(rgy, n, 1)
	l.weightGrad(rgwt, rg, x, n)
	var g []F
	if rx != nil || l.inputGradT() && (gx != nil || rgx != nil) {
		g = l.transposed(gy, n, 0)
	}
	if rx != nil {
		l.weightGrad(rgwt, g, rx, n)
	}
	addColumnSums(rgw[l.no*l.ni:], rgy, n)
	if gx != nil {
		l.inputGrad(gx, n, l.inputTerm(gy, g), wt)
	}
	if rgx != nil {
		l.inputGrad(rgx, n, l.inputTerm(rgy, rg), wt, l.inputTerm(gy, g), ut)
	}
}
