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
}

func newDense(sp Spec, in Shape) (layer, error) {
	if sp.Out < 1 || sp.Out > MaxActivation {
		return nil, fmt.Errorf("%d outputs: must be in [1, %d]", sp.Out, MaxActivation)
	}
	return &dense{ni: in.Size(), no: sp.Out}, nil
}

func (l *dense) out() Shape         { return Shape{l.no, 1, 1} }
func (l *dense) params() int        { return l.no*l.ni + l.no }
func (l *dense) flops() int64       { return 2 * int64(l.no) * int64(l.ni) }
func (l *dense) memory(n int) int64 { return 8 * int64(n) * int64(l.no) }

func (l *dense) reserve(n int) {
	if len(l.tmp) < n*l.no {
		l.tmp = make([]float64, n*l.no)
	}
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

// forward uses DotNT, which handles few outputs (a classifier's) far
// better than the accumulating kernels; the bias is added after.
func (l *dense) forward(y, x, w []float64, n int) {
	wt, bias := w[:l.no*l.ni], w[l.no*l.ni:]
	gemm.DotNT(n, l.no, l.ni, x, l.ni, wt, l.ni, y, l.no)
	addRows(y, bias, n)
}

func (l *dense) backward(gx, gw, gy, x, _, w []float64, n int) {
	wt := w[:l.no*l.ni]
	gemm.AccTN(l.no, l.ni, n, gy, l.no, x, l.ni, gw[:l.no*l.ni], l.ni)
	addColumnSums(gw[l.no*l.ni:], gy, n)
	if gx != nil {
		clear(gx[:n*l.ni])
		gemm.AccNN(n, l.ni, l.no, gy, l.no, wt, l.ni, gx, l.ni)
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
	gemm.AccTN(l.no, l.ni, n, rgy, l.no, x, l.ni, rgwt, l.ni)
	if rx != nil {
		gemm.AccTN(l.no, l.ni, n, gy, l.no, rx, l.ni, rgwt, l.ni)
	}
	addColumnSums(rgw[l.no*l.ni:], rgy, n)
	if gx != nil {
		clear(gx[:n*l.ni])
		gemm.AccNN(n, l.ni, l.no, gy, l.no, wt, l.ni, gx, l.ni)
	}
	if rgx != nil {
		clear(rgx[:n*l.ni])
		gemm.AccNN(n, l.ni, l.no, rgy, l.no, wt, l.ni, rgx, l.ni)
		gemm.AccNN(n, l.ni, l.no, gy, l.no, ut, l.ni, rgx, l.ni)
	}
}
