package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/gemm"
)

// conv is a 2-D convolution computed per sample as one matrix product with
// the sample's patch matrix (im2col): with K = C·KH·KW rows, one per weight
// column (c, ky, kx), and P = Ho·Wo columns, one per output position,
//
//	Y_b = W·col(x_b) + b1ᵀ    (Out × P, the sample's output planes).
//
// The patch matrix of one sample is rebuilt in every pass that needs it
// rather than kept for the batch: that costs K·P copies against the
// product's Out·K·P multiply-adds, keeps the workspace one sample large and
// in cache, and the samples' products are accumulated in sample order, so
// results do not depend on any blocking.
type conv struct {
	in, o           Shape
	kh, kw, s, pad  int
	k, p            int   // rows and columns of a patch matrix
	lo, hi          []int // for each kx, the output columns whose input column is inside the plane
	col, col2, gcol []float64
}

func newConv(sp Spec, in Shape) (layer, error) {
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
	l := &conv{
		in: in, o: Shape{sp.Out, ho, wo},
		kh: sp.KH, kw: sp.KW, s: s, pad: sp.Pad,
		k: in.C * sp.KH * sp.KW, p: ho * wo,
		lo: make([]int, sp.KW), hi: make([]int, sp.KW),
	}
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
	return l, nil
}

func (l *conv) out() Shape   { return l.o }
func (l *conv) params() int  { return l.o.C*l.k + l.o.C }
func (l *conv) flops() int64 { return 2 * int64(l.o.C) * int64(l.k) * int64(l.p) }

func (l *conv) memory(int) int64 { return 8 * 3 * int64(l.k) * int64(l.p) }

func (l *conv) reserve(int) {
	if l.col == nil {
		l.col = make([]float64, l.k*l.p)
		l.col2 = make([]float64, l.k*l.p)
		l.gcol = make([]float64, l.k*l.p)
	}
}

// init draws weights and biases from U(−1/√fan_in, 1/√fan_in), fan_in = K:
// PyTorch's default (Kaiming-uniform with a = √5 for the weights).
func (l *conv) init(w []float64, r *rand.Rand) { uniformInit(w, l.k, r) }

func uniformInit(w []float64, fanIn int, r *rand.Rand) {
	bound := 1 / math.Sqrt(float64(fanIn))
	for i := range w {
		w[i] = bound * (2*r.Float64() - 1)
	}
}

// im2col writes the patch matrix of one sample x into col: row
// (c·KH + ky)·KW + kx, column oy·Wo + ox holds x[c][oy·s−pad+ky][ox·s−pad+kx],
// 0 in the padding.
func (l *conv) im2col(col, x []float64) {
	h, w, wo, s := l.in.H, l.in.W, l.o.W, l.s
	r := 0
	for c := range l.in.C {
		plane := x[c*h*w : (c+1)*h*w]
		for ky := range l.kh {
			for kx := range l.kw {
				row := col[r*l.p : (r+1)*l.p]
				r++
				lo, hi := l.lo[kx], l.hi[kx]
				off := kx - l.pad
				for oy := range l.o.H {
					dst := row[oy*wo : (oy+1)*wo]
					iy := oy*s - l.pad + ky
					if iy < 0 || iy >= h {
						clear(dst)
						continue
					}
					src := plane[iy*w : (iy+1)*w]
					clear(dst[:lo])
					clear(dst[hi:])
					if s == 1 {
						copy(dst[lo:hi], src[lo+off:hi+off])
						continue
					}
					for ox := lo; ox < hi; ox++ {
						dst[ox] = src[ox*s+off]
					}
				}
			}
		}
	}
}

// col2im writes into gx (one sample) the sum, over the patch-matrix entries
// that read each input value, of gcol: the adjoint of im2col.
func (l *conv) col2im(gx, gcol []float64) {
	h, w, wo, s := l.in.H, l.in.W, l.o.W, l.s
	clear(gx[:l.in.Size()])
	r := 0
	for c := range l.in.C {
		plane := gx[c*h*w : (c+1)*h*w]
		for ky := range l.kh {
			for kx := range l.kw {
				row := gcol[r*l.p : (r+1)*l.p]
				r++
				lo, hi := l.lo[kx], l.hi[kx]
				off := kx - l.pad
				for oy := range l.o.H {
					iy := oy*s - l.pad + ky
					if iy < 0 || iy >= h {
						continue
					}
					src := row[oy*wo : (oy+1)*wo]
					dst := plane[iy*w : (iy+1)*w]
					if s == 1 {
						d := dst[lo+off : hi+off]
						for i, v := range src[lo:hi] {
							d[i] += v
						}
						continue
					}
					for ox := lo; ox < hi; ox++ {
						dst[ox*s+off] += src[ox]
					}
				}
			}
		}
	}
}

// setBias writes the bias of each output channel over its plane of y.
func (l *conv) setBias(y, bias []float64) {
	for c, v := range bias {
		plane := y[c*l.p : (c+1)*l.p]
		for i := range plane {
			plane[i] = v
		}
	}
}

// addPlaneSums adds the sum of each plane of g to gb.
func (l *conv) addPlaneSums(gb, g []float64) {
	for c := range gb {
		var s float64
		for _, v := range g[c*l.p : (c+1)*l.p] {
			s += v
		}
		gb[c] += s
	}
}

func (l *conv) forward(y, x, w []float64, n int) {
	ni, no := l.in.Size(), l.o.Size()
	wt, bias := w[:l.o.C*l.k], w[l.o.C*l.k:]
	for b := range n {
		yb := y[b*no : (b+1)*no]
		l.setBias(yb, bias)
		l.im2col(l.col, x[b*ni:(b+1)*ni])
		gemm.AccNN(l.o.C, l.p, l.k, wt, l.k, l.col, l.p, yb, l.p)
	}
}

func (l *conv) backward(gx, gw, gy, x, _, w []float64, n int) {
	ni, no := l.in.Size(), l.o.Size()
	wt := w[:l.o.C*l.k]
	gwt, gb := gw[:l.o.C*l.k], gw[l.o.C*l.k:]
	for b := range n {
		gyb := gy[b*no : (b+1)*no]
		l.im2col(l.col, x[b*ni:(b+1)*ni])
		gemm.AccNT(l.o.C, l.k, l.p, gyb, l.p, l.col, l.p, gwt, l.k)
		l.addPlaneSums(gb, gyb)
		if gx != nil {
			l.inputGrad(gx[b*ni:(b+1)*ni], wt, gyb, nil, nil)
		}
	}
}

// inputGrad writes gx_b = col2im(Wᵀ·gy_b + Uᵀ·g2_b); u nil drops the second
// term.
func (l *conv) inputGrad(gxb, wt, gyb, ut, g2b []float64) {
	clear(l.gcol)
	gemm.AccTN(l.k, l.p, l.o.C, wt, l.k, gyb, l.p, l.gcol, l.p)
	if ut != nil {
		gemm.AccTN(l.k, l.p, l.o.C, ut, l.k, g2b, l.p, l.gcol, l.p)
	}
	l.col2im(gxb, l.gcol)
}

// rforward: R{Y_b} = U·col(x_b) + u_b1ᵀ + W·col(rx_b).
func (l *conv) rforward(ry, rx, x, _, w, u []float64, n int) {
	ni, no := l.in.Size(), l.o.Size()
	wt := w[:l.o.C*l.k]
	ut, ub := u[:l.o.C*l.k], u[l.o.C*l.k:]
	for b := range n {
		ryb := ry[b*no : (b+1)*no]
		l.setBias(ryb, ub)
		l.im2col(l.col, x[b*ni:(b+1)*ni])
		gemm.AccNN(l.o.C, l.p, l.k, ut, l.k, l.col, l.p, ryb, l.p)
		if rx != nil {
			l.im2col(l.col, rx[b*ni:(b+1)*ni])
			gemm.AccNN(l.o.C, l.p, l.k, wt, l.k, l.col, l.p, ryb, l.p)
		}
	}
}

// rbackward: the backward products are bilinear in (W, gy) and (gy, x), so
//
//	R{gW} = rgy_b·col(x_b)ᵀ + gy_b·col(rx_b)ᵀ,  R{gb} = Σ rgy_b,
//	R{gx_b} = col2im(Wᵀ·rgy_b + Uᵀ·gy_b).
func (l *conv) rbackward(gx, rgx, rgw, gy, rgy, x, rx, _, _, w, u []float64, n int) {
	ni, no := l.in.Size(), l.o.Size()
	wt, ut := w[:l.o.C*l.k], u[:l.o.C*l.k]
	rgwt, rgb := rgw[:l.o.C*l.k], rgw[l.o.C*l.k:]
	for b := range n {
		gyb, rgyb := gy[b*no:(b+1)*no], rgy[b*no:(b+1)*no]
		l.im2col(l.col, x[b*ni:(b+1)*ni])
		gemm.AccNT(l.o.C, l.k, l.p, rgyb, l.p, l.col, l.p, rgwt, l.k)
		if rx != nil {
			l.im2col(l.col2, rx[b*ni:(b+1)*ni])
			gemm.AccNT(l.o.C, l.k, l.p, gyb, l.p, l.col2, l.p, rgwt, l.k)
		}
		l.addPlaneSums(rgb, rgyb)
		if gx != nil {
			l.inputGrad(gx[b*ni:(b+1)*ni], wt, gyb, nil, nil)
		}
		if rgx != nil {
			l.inputGrad(rgx[b*ni:(b+1)*ni], wt, rgyb, ut, gyb)
		}
	}
}
