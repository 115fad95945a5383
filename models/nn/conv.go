package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// conv is a 2-D convolution computed as matrix products with patch
// matrices (im2col): with K = C·KH·KW rows, one per weight column
// (c, ky, kx), and P = Ho·Wo columns, one per output position of a sample,
//
//	Y_b = W·col(x_b) + b1ᵀ    (Out × P, the sample's output planes).
//
// The samples are taken in chunks of q, their patch matrices side by side
// (K × qP), so that every product has at least minCols columns; when one
// sample has that many (q = 1) the products write the NCHW activations in
// place, otherwise through a chunk workspace. The patch matrices are rebuilt
// in every pass that needs them rather than kept for the batch: that costs
// K·P copies per sample against the product's Out·K·P multiply-adds and
// keeps the workspaces one chunk large and in cache. Chunks are processed in
// sample order, so results do not depend on any blocking.
type conv[F gemm.Float] struct {
	in, o          Shape
	kh, kw, s, pad int
	k, p           int   // rows of a patch matrix, columns per sample
	q              int   // samples per chunk
	lo, hi         []int // for each kx, the output columns whose input column is inside the plane
	runs           []int // for each (c, ky), the offset of its input row from the patch's top-left input
	// wDot: form the weight gradient of each chunk in dot order, gy·colᵀ
	// with both operands' rows contiguous (DotNT), into gwT, and add it to
	// the gradient. The chain-order kernels need Out×P or P×K operands
	// packed, which costs as much as the product when K is small (a first
	// layer's K = KH·KW): measured 45–48 against 16–28 GFLOP/s for K = 9 and
	// 25, while for K ≥ 64 the chain order is faster (49–51 against 40).
	// In float32 also when Out is not a multiple of 8, which the chain
	// kernels' tiles handle badly: lenet's first layer, 6×75 over 784
	// positions, 184 GFLOP/s in dot order against 53.
	wDot bool
	// wT (when not wDot): accumulate the weight gradient transposed
	// (K × Out) in gwT: the product then has Out columns, which the
	// kernels handle much better than K columns when K is not a multiple
	// of 8.
	wT bool
	// rows: the forward products take the patches as rows (im2row,
	// qP × K) and run in dot order, Y = W·rowsᵀ, both operands' rows
	// contiguous over K: measured 47–49 GFLOP/s where W·col in chain
	// order ran at 32–47 (K = 576 or 800, P = 64 or 121). The backward
	// products keep the patch columns, where the chain order is as fast.
	// In float32 only for K a multiple of 16 (the dot kernels' vector
	// over K): at lenet's K = 75 and 150 dot order ran at 35 and 83
	// GFLOP/s against 230 and 179 in chain order.
	rows bool

	col, col2, gcol []F // K × qP patch matrices (col and col2 adjacent in colBuf)
	colBuf          []F // 2K·qP: col and col2, or (rforward, rows) the qP × 2K patch rows of x and rx
	uw              []F // Out × 2K: [U W] (rforward, rows)
	yc              []F // Out × qP chunk activations (q > 1)
	ystk            []F // 2·Out × padCols(qP): a chunk's [rgy; gy]
	wut             []F // K × 2·Out: [Wᵀ Uᵀ]
	gwT             []F // K × Out (wT) or Out × K (wDot)
}

// minCols is the fewest output columns a convolution's products get.
const minCols = 32

// dotMaxK bounds the patch rows K of the convolutions whose weight
// gradients are formed in dot order (conv.wDot).
const dotMaxK = 64

func newConv[F gemm.Float](sp Spec, in Shape) (layer[F], error) {
	if sp.Out < 1 || sp.Out > MaxActivation {
		return nil, fmt.Errorf("%d output channels: must be in [1, %d]", sp.Out, MaxActivation)
	}
	s := sp.Stride
	if s == 0 {
		s = 1
	}
	if sp.KH > MaxActivation || sp.KW > MaxActivation {
		return nil, fmt.Errorf("kernel %d×%d too large", sp.KH, sp.KW)
	}
	ho, wo, err := window(sp.KH, sp.KW, s, sp.Pad, in.H, in.W)
	if err != nil {
		return nil, err
	}
	if sp.KH*sp.KW > MaxActivation || in.C*sp.KH*sp.KW > MaxActivation {
		return nil, fmt.Errorf("kernel %d×%d on %d channels too large", sp.KH, sp.KW, in.C)
	}
	if ho > MaxActivation || wo > MaxActivation || ho*wo > MaxActivation {
		return nil, fmt.Errorf("output planes %d×%d too large", ho, wo)
	}
	l := &conv[F]{
		in: in, o: Shape{sp.Out, ho, wo},
		kh: sp.KH, kw: sp.KW, s: s, pad: sp.Pad,
		k: in.C * sp.KH * sp.KW, p: ho * wo,
		lo: make([]int, sp.KW), hi: make([]int, sp.KW),
	}
	// In the patch matrices of one sample the columns (output positions)
	// number P, which is small in the last layers of a net (1 in a 1×1
	// output): below minCols the products work on a chunk of samples side
	// by side.
	for kx := range sp.KW {
		lo, hi := 0, 0
		for ox := range wo {
			ix := ox*s - sp.Pad + kx
			if ix < 0 {
				lo = ox + 1
			}
			if ix < in.W {
				hi = ox + 1
			}
		}
		l.lo[kx], l.hi[kx] = lo, max(hi, lo)
	}
	l.q = max(1, (minCols+l.p-1)/l.p)
	l.wDot = l.k < dotMaxK || (!vec.Is64[F]() && l.o.C%8 != 0)
	l.wT = !l.wDot && l.o.C%8 == 0
	l.rows = l.k >= dotMaxK && (vec.Is64[F]() || l.k%16 == 0)
	for c := range in.C {
		for ky := range sp.KH {
			l.runs = append(l.runs, (c*in.H+ky)*in.W)
		}
	}
	return l, nil
}

func (l *conv[F]) out() Shape   { return l.o }
func (l *conv[F]) params() int  { return l.o.C*l.k + l.o.C }
func (l *conv[F]) flops() int64 { return 2 * int64(l.o.C) * int64(l.k) * int64(l.p) }

func (l *conv[F]) memory(int) int64 {
	cols := int64(l.q) * int64(l.p)
	pc := int64(padCols(l.q * l.p))
	k, no := int64(l.k), int64(l.o.C)
	// colBuf, gcol, gwT, wut, ystk, [U W] and yc.
	f := 2*k*cols + k*pc + k*no + 2*k*no + 2*no*pc
	if l.rows {
		f += 2 * k * no
	}
	if l.q > 1 {
		f += no * cols
	}
	return vec.ElemSize[F]() * f
}

func (l *conv[F]) reserve(int) {
	if l.col != nil {
		return
	}
	cols := l.q * l.p
	l.colBuf = make([]F, 2*l.k*cols)
	l.col, l.col2 = l.colBuf[:l.k*cols:l.k*cols], l.colBuf[l.k*cols:]
	if l.rows {
		l.uw = make([]F, 2*l.k*l.o.C)
	}
	l.gcol = make([]F, l.k*padCols(cols))
	l.ystk = make([]F, 2*l.o.C*padCols(cols))
	l.wut = make([]F, 2*l.k*l.o.C)
	if l.q > 1 {
		l.yc = make([]F, l.o.C*cols)
	}
	if l.wT || l.wDot {
		l.gwT = make([]F, l.k*l.o.C)
	}
}

// init draws weights and biases from U(−1/√fan_in, 1/√fan_in), fan_in = K:
// PyTorch's default (Kaiming-uniform with a = √5 for the weights).
func (l *conv[F]) init(w []F, r *rand.Rand) { uniformInit(w, l.k, r) }

func uniformInit[F gemm.Float](w []F, fanIn int, r *rand.Rand) {
	bound := 1 / math.Sqrt(float64(fanIn))
	for i := range w {
		w[i] = F(bound * (2*r.Float64() - 1))
	}
}

// outView returns where the products write the outputs of the m samples
// starting at sample b0 of y: y itself for one sample, else ws, laid out
// Out × mP, which scatterOut then moves into y.
func (l *conv[F]) outView(y, ws []F, b0, m int) []F {
	if m == 1 {
		return y[b0*l.o.Size() : (b0+1)*l.o.Size()]
	}
	return ws[:l.o.C*m*l.p]
}

// scatterOut moves the chunk v (from outView) into samples b0… of y.
func (l *conv[F]) scatterOut(y, v []F, b0, m int) {
	if m == 1 {
		return
	}
	ld, no := m*l.p, l.o.Size()
	for j := range m {
		yj := y[(b0+j)*no : (b0+j+1)*no]
		for c := range l.o.C {
			copy(yj[c*l.p:(c+1)*l.p], v[c*ld+j*l.p:c*ld+(j+1)*l.p])
		}
	}
}

// gather writes the gradients of the m samples starting at b0 of gy into
// dst laid out Out × ld, sample j in columns jP to (j+1)P, and zeros in
// the columns from mP to ld.
func (l *conv[F]) gather(dst []F, ld int, gy []F, b0, m int) {
	no, cols := l.o.Size(), m*l.p
	for c := range l.o.C {
		d := dst[c*ld : (c+1)*ld]
		for j := range m {
			copy(d[j*l.p:(j+1)*l.p], gy[(b0+j)*no+c*l.p:(b0+j)*no+(c+1)*l.p])
		}
		clear(d[cols:])
	}
}

// inPlace reports whether the backward products of a chunk of m samples
// can read their output gradients where they are (one sample, whose
// Out × P block is the chunk layout) rather than gathered: when no input
// gradient is formed (noInput), whose product wants padded columns, or
// when P needs no padding.
func (l *conv[F]) inPlace(m int, noInput bool) bool {
	return m == 1 && (noInput || padCols(l.p) == l.p)
}

// padCols returns cols rounded up to a multiple of 4: the input-gradient
// products get that many columns, which the kernels cover with whole
// 8- and 4-wide tiles (AccNN 576×124×64 at 48 GFLOP/s, 576×121×64 at 41:
// the last columns of a product run as scalar chains).
func padCols(cols int) int { return (cols + 3) &^ 3 }

func (l *conv[F]) forward(y, x, w []F, n int) {
	ni := l.in.Size()
	wt, bias := w[:l.o.C*l.k], w[l.o.C*l.k:]
	for b0 := 0; b0 < n; b0 += l.q {
		m := min(l.q, n-b0)
		cols := m * l.p
		yv := l.outView(y, l.yc, b0, m)
		if l.rows {
			l.im2row(l.col, l.k, 0, x[b0*ni:(b0+m)*ni], m)
			gemm.DotNT(l.o.C, cols, l.k, wt, l.k, l.col, l.k, yv, cols)
			addBias(yv, bias, cols)
		} else {
			setBias(yv, bias, cols)
			l.im2col(l.col, x[b0*ni:(b0+m)*ni], m)
			gemm.AccNN(l.o.C, cols, l.k, wt, l.k, l.col, cols, yv, cols)
		}
		l.scatterOut(y, yv, b0, m)
	}
}

// weightGrad adds gy·colᵀ (Out × K) to the weight gradient, into l.gwT
// transposed when l.wT; gy has leading dimension ldg, col cols.
func (l *conv[F]) weightGrad(gwt, gy []F, ldg int, col []F, cols int) {
	if l.wDot {
		gemm.DotNT(l.o.C, l.k, cols, gy, ldg, col, cols, l.gwT, l.k)
		gwt = gwt[:len(l.gwT)]
		for i, v := range l.gwT {
			gwt[i] += v
		}
		return
	}
	if l.wT {
		gemm.AccNT(l.k, l.o.C, cols, col, cols, gy, ldg, l.gwT, l.o.C)
		return
	}
	gemm.AccNT(l.o.C, l.k, cols, gy, ldg, col, cols, gwt, l.k)
}

// startWeightGrad and endWeightGrad bracket the weight-gradient
// accumulation of a pass: with l.wT it runs in l.gwT from 0 and is added to
// the gradient at the end.
func (l *conv[F]) startWeightGrad() {
	if l.wT {
		clear(l.gwT)
	}
}

func (l *conv[F]) endWeightGrad(gwt []F) {
	if !l.wT {
		return
	}
	for o := range l.o.C {
		row := gwt[o*l.k : (o+1)*l.k]
		for k := range row {
			row[k] += l.gwT[k*l.o.C+o]
		}
	}
}

func (l *conv[F]) backward(gx, gw, gy, x, _, w []F, n int) {
	l.backwardStart(gx != nil, w)
	l.backwardSamples(gx, gw, gy, x, 0, n)
	l.endWeightGrad(gw[:l.o.C*l.k])
}

// backwardStart prepares backward's passes over the samples
// (backwardSamples), which endWeightGrad finishes; with input gradients
// (gx), it transposes the weights.
func (l *conv[F]) backwardStart(gx bool, w []F) {
	if gx {
		l.transposeWeights(w[:l.o.C*l.k], nil)
	}
	l.startWeightGrad()
}

// backwardSamples is backward's pass over the samples b0 to b1 − 1 of
// the batch, b0 a multiple of the chunk: passes over consecutive ranges
// give the bits of one pass over them all.
func (l *conv[F]) backwardSamples(gx, gw, gy, x []F, b0, b1 int) {
	ni, no := l.in.Size(), l.o.C
	gwt, gb := gw[:no*l.k], gw[no*l.k:]
	for ; b0 < b1; b0 += l.q {
		m := min(l.q, b1-b0)
		cols := m * l.p
		ld := padCols(cols)
		var gyv []F
		if l.inPlace(m, gx == nil) {
			ld, gyv = cols, gy[b0*l.o.Size():(b0+1)*l.o.Size()]
		} else {
			gyv = l.ystk[no*ld : 2*no*ld]
			l.gather(gyv, ld, gy, b0, m)
		}
		l.im2col(l.col, x[b0*ni:(b0+m)*ni], m)
		l.weightGrad(gwt, gyv, ld, l.col, cols)
		addRowSums(gb, gyv, ld, cols)
		if gx != nil {
			l.inputGrad(gx[b0*ni:(b0+m)*ni], no, gyv, ld, m)
		}
	}
}

// transposeWeights writes [Wᵀ Uᵀ] (K × 2·Out) into l.wut, or Wᵀ alone
// into its first Out columns when ut is nil.
func (l *conv[F]) transposeWeights(wt, ut []F) {
	no, k := l.o.C, l.k
	for o := range no {
		row := wt[o*k : (o+1)*k]
		for i, v := range row {
			l.wut[i*2*no+o] = v
		}
		if ut == nil {
			continue
		}
		row = ut[o*k : (o+1)*k]
		for i, v := range row {
			l.wut[i*2*no+no+o] = v
		}
	}
}

// inputGrad writes into gx (m samples) col2im([Wᵀ Uᵀ]·g) for g the
// kk × ld chunk of gradients (kk = Out: Wᵀ·g; kk = 2·Out: Wᵀ·g₁ + Uᵀ·g₂
// for g = [g₁; g₂], one product over 2·Out).
func (l *conv[F]) inputGrad(gx []F, kk int, g []F, ld, m int) {
	gcol := l.gcol[:l.k*ld]
	clear(gcol)
	gemm.AccNN(l.k, ld, kk, l.wut, 2*l.o.C, g, ld, gcol, ld)
	l.col2im(gx, gcol, ld, m)
}

// rforward: R{Y_b} = U·col(x_b) + u_b1ᵀ + W·col(rx_b).
func (l *conv[F]) rforward(ry, rx, x, _, w, u []F, n int) {
	ni := l.in.Size()
	wt := w[:l.o.C*l.k]
	ut, ub := u[:l.o.C*l.k], u[l.o.C*l.k:]
	if l.rows {
		l.rforwardRows(ry, rx, x, wt, ut, ub, n)
		return
	}
	for b0 := 0; b0 < n; b0 += l.q {
		m := min(l.q, n-b0)
		cols := m * l.p
		ryv := l.outView(ry, l.yc, b0, m)
		setBias(ryv, ub, cols)
		l.im2col(l.col, x[b0*ni:(b0+m)*ni], m)
		gemm.AccNN(l.o.C, cols, l.k, ut, l.k, l.col, cols, ryv, cols)
		if rx != nil {
			l.im2col(l.col, rx[b0*ni:(b0+m)*ni], m)
			gemm.AccNN(l.o.C, cols, l.k, wt, l.k, l.col, cols, ryv, cols)
		}
		l.scatterOut(ry, ryv, b0, m)
	}
}

// rforwardRows is rforward in dot order on patch rows: with rx, one
// product [U W]·[rows(x) rows(rx)]ᵀ over 2K.
func (l *conv[F]) rforwardRows(ry, rx, x, wt, ut, ub []F, n int) {
	ni, k := l.in.Size(), l.k
	a, ka := ut, k
	if rx != nil {
		for o := range l.o.C {
			copy(l.uw[o*2*k:o*2*k+k], ut[o*k:(o+1)*k])
			copy(l.uw[o*2*k+k:(o+1)*2*k], wt[o*k:(o+1)*k])
		}
		a, ka = l.uw, 2*k
	}
	// In float32, two products over K and a sum: the dot kernels ran
	// fedem-cnn's second convolution (64 × 64 over K = 800) at 215 GFLOP/s
	// and over 2K at 163, their rows no longer fitting L1 together.
	split := rx != nil && !vec.Is64[F]()
	for b0 := 0; b0 < n; b0 += l.q {
		m := min(l.q, n-b0)
		cols := m * l.p
		ryv := l.outView(ry, l.yc, b0, m)
		l.im2row(l.colBuf, ka, 0, x[b0*ni:(b0+m)*ni], m)
		if rx != nil {
			l.im2row(l.colBuf, ka, k, rx[b0*ni:(b0+m)*ni], m)
		}
		if split {
			tmp := l.ystk[:l.o.C*cols]
			gemm.DotNT(l.o.C, cols, k, ut, k, l.colBuf, ka, ryv, cols)
			gemm.DotNT(l.o.C, cols, k, wt, k, l.colBuf[k:], ka, tmp, cols)
			vec.AddScaled(ryv[:len(tmp)], 1, tmp)
		} else {
			gemm.DotNT(l.o.C, cols, ka, a, ka, l.colBuf, ka, ryv, cols)
		}
		addBias(ryv, ub, cols)
		l.scatterOut(ry, ryv, b0, m)
	}
}

// rbackward: the backward products are bilinear in (W, gy) and (gy, x), so
//
//	R{gW} = rgy_b·col(x_b)ᵀ + gy_b·col(rx_b)ᵀ,  R{gb} = Σ rgy_b,
//	R{gx_b} = col2im(Wᵀ·rgy_b + Uᵀ·gy_b).
func (l *conv[F]) rbackward(gx, rgx, rgw, gy, rgy, x, rx, _, _, w, u []F, n int) {
	ni, no := l.in.Size(), l.o.C
	rgwt, rgb := rgw[:no*l.k], rgw[no*l.k:]
	if gx != nil || rgx != nil {
		l.transposeWeights(w[:no*l.k], u[:no*l.k])
	}
	l.startWeightGrad()
	for b0 := 0; b0 < n; b0 += l.q {
		m := min(l.q, n-b0)
		cols := m * l.p
		ld := padCols(cols)
		// [rgy; gy], so that R{gx} is one product with [Wᵀ Uᵀ].
		st := l.ystk[:2*no*ld]
		rgyv, gyv := st[:no*ld], st[no*ld:]
		if l.inPlace(m, gx == nil) && rgx == nil {
			ld = cols
			rgyv, gyv = rgy[b0*l.o.Size():(b0+1)*l.o.Size()], gy[b0*l.o.Size():(b0+1)*l.o.Size()]
		} else {
			l.gather(rgyv, ld, rgy, b0, m)
			l.gather(gyv, ld, gy, b0, m)
		}
		l.im2col(l.col, x[b0*ni:(b0+m)*ni], m)
		l.weightGrad(rgwt, rgyv, ld, l.col, cols)
		if rx != nil {
			l.im2col(l.col2, rx[b0*ni:(b0+m)*ni], m)
			l.weightGrad(rgwt, gyv, ld, l.col2, cols)
		}
		addRowSums(rgb, rgyv, ld, cols)
		if gx != nil {
			l.inputGrad(gx[b0*ni:(b0+m)*ni], no, gyv, ld, m)
		}
		if rgx != nil {
			l.inputGrad(rgx[b0*ni:(b0+m)*ni], 2*no, st, ld, m)
		}
	}
	l.endWeightGrad(rgwt)
}
