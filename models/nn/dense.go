package nn

import (
	"fmt"
	"math/rand/v2"

	"hgpsim/internal/gemm"
)

// dense is Y = X·Wᵀ + 1bᵀ on the batch, X being n × In (each sample's
// input flattened) and Y n × Out; every pass is one or two matrix products
// over the whole batch.
type dense struct {
	ni, no int
	tmp    []float64 // n × Out: the second product of rforward
	gyT    []float64 // Out × n: gY transposed (wide layers, see weightGrad)
}

// wideOut is the fewest outputs of a dense layer whose weight gradients
// take gY transposed (dense.weightGrad).
const wideOut = 256

func newDense(sp Spec, in Shape) (layer, error) {
	if sp.Out < 1 || sp.Out > MaxActivation {
		return nil, fmt.Errorf("%d outputs: must be in [1, %d]", sp.Out, MaxActivation)
	}
	return &dense{ni: in.Size(), no: sp.Out}, nil
}

func (l *dense) out() Shape   { return Shape{l.no, 1, 1} }
func (l *dense) params() int  { return l.no*l.ni + l.no }
func (l *dense) flops() int64 { return 2 * int64(l.no) * int64(l.ni) }
func (l *dense) memory(n int) int64 {
	if l.no >= wideOut {
		return 16 * int64(n) * int64(l.no)
	}
	return 8 * int64(n) * int64(l.no)
}

func (l *dense) reserve(n int) {
	if len(l.tmp) < n*l.no {
		l.tmp = make([]float64, n*l.no)
		if l.no >= wideOut {
			l.gyT = make([]float64, n*l.no)
		}
	}
}

// weightGrad adds gᵀX (Out × In) to gw. For wide layers it transposes g
// first and runs AccNN, whose A rows are then contiguous over the samples,
// where AccTN packs strided slivers of g: the same chain order and bits,
// measured 40.3 → 44.5 GFLOP/s at 2048 × 1024 × 128 (the transpose is
// 1/1024 of the product's work).
func (l *dense) weightGrad(gw, g, x []float64, n int) {
	if l.no < wideOut {
		gemm.AccTN(l.no, l.ni, n, g, l.no, x, l.ni, gw, l.ni)
		return
	}
	t := l.gyT[:l.no*n]
	for b := range n {
		row := g[b*l.no : (b+1)*l.no]
		for o, v := range row {
			t[o*n+b] = v
		}
	}
	gemm.AccNN(l.no, l.ni, n, t, n, x, l.ni, gw, l.ni)
}

// init draws from U(−1/√In, 1/√In), PyTorch's default for Linear.
func (l *dense) init(w []float64, r *rand.Rand) { uniformInit(w, l.ni, r) }

// addRows adds the row vector v to each of the n rows of y.
func addRows(y, v []float64, n int) {
	for b := range n {
		row := y[b*len(v) : (b+1)*len(v)]
		for j, t := range v {
			row[j] += t
		}
	}
}

// addColumnSums adds the column sums of the n × len(gb) matrix g to gb,
// summing in sample order.
func addColumnSums(gb, g []float64, n int) {
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
func (l *dense) accNN(gx, g, w []float64, n int) {
	for p0 := 0; p0 < l.no; p0 += kSlice {
		kb := min(kSlice, l.no-p0)
		gemm.AccNN(n, l.ni, kb, g[p0:], l.no, w[p0*l.ni:], l.ni, gx, l.ni)
	}
}

// forward uses DotNT, which handles few outputs (a classifier's) far
// better than the accumulating kernels; the bias is added after.
func (l *dense) forward(y, x, w []float64, n int) {
	wt, bias := w[:l.no*l.ni], w[l.no*l.ni:]
	gemm.DotNT(n, l.no, l.ni, x, l.ni, wt, l.ni, y, l.no)
	addRows(y, bias, n)
}

func (l *dense) backward(gx, gw, gy, x, _, w []float64, n int) {
	wt := w[:l.no*l.ni]
	l.weightGrad(gw[:l.no*l.ni], gy, x, n)
	addColumnSums(gw[l.no*l.ni:], gy, n)
	if gx != nil {
		clear(gx[:n*l.ni])
		l.accNN(gx, gy, wt, n)
	}
}

// rforward: R{Y} = X·Uᵀ + R{X}·Wᵀ + 1u_bᵀ, each product by DotNT.
func (l *dense) rforward(ry, rx, x, _, w, u []float64, n int) {
	wt, ut, ub := w[:l.no*l.ni], u[:l.no*l.ni], u[l.no*l.ni:]
	ry = ry[:n*l.no]
	gemm.DotNT(n, l.no, l.ni, x, l.ni, ut, l.ni, ry, l.no)
	if rx != nil {
		tmp := l.tmp[:n*l.no]
		gemm.DotNT(n, l.no, l.ni, rx, l.ni, wt, l.ni, tmp, l.no)
		for i, t := range tmp {
			ry[i] += t
		}
	}
	addRows(ry, ub, n)
}

// rbackward: R{gW} = R{gY}ᵀX + gYᵀR{X}, R{gb} = R{gY}ᵀ1,
// R{gX} = R{gY}·W + gY·U.
func (l *dense) rbackward(gx, rgx, rgw, gy, rgy, x, rx, _, _, w, u []float64, n int) {
	wt, ut := w[:l.no*l.ni], u[:l.no*l.ni]
	rgwt := rgw[:l.no*l.ni]
	l.weightGrad(rgwt, rgy, x, n)
	if rx != nil {
		l.weightGrad(rgwt, gy, rx, n)
	}
	addColumnSums(rgw[l.no*l.ni:], rgy, n)
	if gx != nil {
		clear(gx[:n*l.ni])
		l.accNN(gx, gy, wt, n)
	}
	if rgx != nil {
		clear(rgx[:n*l.ni])
		l.accNN(rgx, rgy, wt, n)
		l.accNN(rgx, gy, ut, n)
	}
}
