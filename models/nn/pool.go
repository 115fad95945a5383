package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// pool is a max or average pool over KH × KW windows without padding
// (PyTorch's floor mode: windows that do not fit are dropped).
//
// Max pooling is piecewise linear: on each piece it selects one input per
// window, its second derivative is 0 wherever it exists, and the backward,
// tangent and tangent-backward passes all route through the element forward
// selected (the first maximum of the window in row-major order, kept in
// arg). Average pooling is linear.
type pool[F gemm.Float] struct {
	in, o  Shape
	kh, kw int
	s      int
	max    bool
	arg    []int32 // max pool: for each output of the batch, the offset of its maximum in the sample's input
}

func newPool[F gemm.Float](sp Spec, in Shape) (layer[F], error) {
	s := sp.Stride
	if s == 0 {
		if sp.KH != sp.KW {
			return nil, fmt.Errorf("window %d×%d is not square: give a stride", sp.KH, sp.KW)
		}
		s = sp.KH
	}
	ho, wo, err := window(sp.KH, sp.KW, s, 0, in.H, in.W)
	if err != nil {
		return nil, err
	}
	return &pool[F]{in: in, o: Shape{in.C, ho, wo}, kh: sp.KH, kw: sp.KW, s: s, max: sp.Kind == KindMaxPool2D}, nil
}

func (l *pool[F]) out() Shape           { return l.o }
func (l *pool[F]) params() int          { return 0 }
func (l *pool[F]) flops() int64         { return 0 }
func (l *pool[F]) init([]F, *rand.Rand) {}

func (l *pool[F]) memory(n int) int64 {
	if !l.max {
		return 0
	}
	return 4 * int64(n) * int64(l.o.Size()) // int32 offsets, whatever F
}

func (l *pool[F]) reserve(n int) {
	if l.max && len(l.arg) < n*l.o.Size() {
		l.arg = make([]int32, n*l.o.Size())
	}
}

func (l *pool[F]) forward(y, x, _ []F, n int) {
	if l.max {
		l.forwardMax(y, x, n)
		return
	}
	l.average(y, x, n)
}

// forwardMax writes the window maxima into y and their offsets into l.arg.
func (l *pool[F]) forwardMax(y, x []F, n int) {
	if l.kh == 2 && l.kw == 2 && l.s == 2 {
		l.forwardMax2(y, x, n)
		return
	}
	l.forwardMaxScan(y, x, n)
}

// forwardMaxScan is forwardMax for any window: a row-major scan.
func (l *pool[F]) forwardMaxScan(y, x []F, n int) {
	h, w, ho, wo := l.in.H, l.in.W, l.o.H, l.o.W
	ni, no := l.in.Size(), l.o.Size()
	for b := range n {
		xb := x[b*ni : (b+1)*ni]
		yb, ab := y[b*no:(b+1)*no], l.arg[b*no:(b+1)*no]
		for c := range l.in.C {
			for oy := range ho {
				for ox := range wo {
					base := c*h*w + oy*l.s*w + ox*l.s
					best, bi := xb[base], base
					for ky := range l.kh {
						row := xb[base+ky*w : base+ky*w+l.kw]
						for kx, v := range row {
							// Two selections the compiler makes
							// branch-free (the comparison outcomes are
							// close to random).
							j := bi
							if v > best {
								j = base + ky*w + kx
							}
							bi = j
							best = xb[bi]
						}
					}
					i := (c*ho+oy)*wo + ox
					yb[i], ab[i] = best, int32(bi)
				}
			}
		}
	}
}

// forwardMax2 is forwardMax for 2×2 windows with stride 2, the common
// case, as a tournament: the first maximum of each row, then of the two.
// Strict comparisons keep the earlier element on ties, so it selects what
// the row-major scan does.
func (l *pool[F]) forwardMax2(y, x []F, n int) {
	hw := l.in.H * l.in.W
	for p := range n * l.in.C {
		l.max2Plane(p, y, x[p*hw:(p+1)*hw])
	}
}

// max2Plane is forwardMax2 on the batch's channel plane p, whose inputs
// are xp: it writes that plane's maxima into y and their offsets into
// l.arg.
func (l *pool[F]) max2Plane(p int, y, xp []F) {
	h, w, ho, wo := l.in.H, l.in.W, l.o.H, l.o.W
	// Windows the kernels take per row, four (or eight) at a time.
	k := 0
	if patchVector {
		k = wo &^ 3
	}
	xp = xp[:h*w]
	yp, ap := y[p*ho*wo:(p+1)*ho*wo], l.arg[p*ho*wo:(p+1)*ho*wo]
	// Offsets in arg are within the sample: add the plane's start.
	base := (p % l.in.C) * h * w
	if k > 0 && k == wo && !vec.Is64[F]() {
		// No row has a tail: one call for the plane, without a call's
		// overhead per row.
		maxPool2Rows32(ho, wo, ptr32(xp), ptr32(yp), &ap[0], base, w)
		return
	}
	for oy := range ho {
		r0 := xp[2*oy*w : 2*oy*w+2*wo]
		r1 := xp[(2*oy+1)*w : (2*oy+1)*w+2*wo]
		yr, ar := yp[oy*wo:(oy+1)*wo], ap[oy*wo:(oy+1)*wo]
		if k > 0 && vec.Is64[F]() {
			maxPool2Row64(k, ptr64(r0), ptr64(r1), ptr64(yr), &ar[0], base+2*oy*w, w)
		} else if k > 0 {
			maxPool2Rows32(1, k, ptr32(r0), ptr32(yr), &ar[0], base+2*oy*w, w)
		}
		for ox := k; ox < len(yr); ox++ {
			i0 := 2*ox + greater(r0[2*ox+1], r0[2*ox])
			i1 := 2*ox + greater(r1[2*ox+1], r1[2*ox])
			o0, o1 := 2*oy*w+i0, (2*oy+1)*w+i1
			off := o0 + greater(r1[i1], r0[i0])*(o1-o0)
			yr[ox] = xp[off]
			ar[ox] = int32(base + off)
		}
	}
}

// greater returns 1 if b > a and 0 otherwise, for a and b neither NaN nor
// both infinite with the same sign, without a branch (the outcomes are
// close to random, and the compiler branches on float comparisons): a − b
// is negative exactly when b > a once −0 is made +0 by adding 0. A float32
// difference widens to float64 exactly, sign included; one form for both
// types keeps the float64 instantiation free of a type test, which costs
// a dictionary load per call there.
func greater[F gemm.Float](b, a F) int {
	return int(math.Float64bits(float64((a+0)-(b+0))) >> 63)
}

// gather writes y[i] = x[arg[i]] per sample.
func (l *pool[F]) gather(y, x []F, n int) {
	ni, no := l.in.Size(), l.o.Size()
	for b := range n {
		xb := x[b*ni : (b+1)*ni]
		yb, ab := y[b*no:(b+1)*no], l.arg[b*no:(b+1)*no]
		for i, a := range ab {
			yb[i] = xb[a]
		}
	}
}

// scatter writes gx = 0 and then adds gy[i] to gx[arg[i]] per sample. A
// window lies in one channel's plane, so it clears and fills one plane at
// a time, while the plane is in L1: clearing the whole batch first would
// pass twice over an input that is often the largest activation of a net
// (a first convolution's output, 19 MB at batch 128 in fedem-cnn).
func (l *pool[F]) scatter(gx, gy []F, n int) {
	hw, plane := l.in.H*l.in.W, l.o.H*l.o.W
	ni, c := l.in.Size(), l.in.C
	vector := patchVector && l.o.W >= 4 && l.tiles()
	disjoint := vector || l.disjoint()
	for p := range n * c {
		if disjoint {
			l.scatterPlane(gx[p*hw:(p+1)*hw], gy, p)
			continue
		}
		b := p / c
		clear(gx[p*hw : (p+1)*hw])
		gxb := gx[b*ni : (b+1)*ni]
		gp, ap := gy[p*plane:(p+1)*plane], l.arg[p*plane:(p+1)*plane]
		ap = ap[:len(gp)]
		for i, v := range gp {
			gxb[ap[i]] += v
		}
	}
}

// scatterPlane is scatter of a disjoint pool on the batch's channel plane
// p, into dst, that plane of gx: for the fused passes (fuse.go) and the
// AVX kernels.
func (l *pool[F]) scatterPlane(dst, gy []F, p int) {
	h, w, wo, plane := l.in.H, l.in.W, l.o.W, l.o.H*l.o.W
	// The offsets in arg are within the sample: dst starts at the
	// plane's offset.
	dst = dst[:h*w]
	off := int32((p % l.in.C) * len(dst))
	gp, ap := gy[p*plane:(p+1)*plane], l.arg[p*plane:(p+1)*plane]
	ap = ap[:len(gp)]
	if patchVector && wo >= 4 && l.tiles() {
		// Whole rows of windows: each input stored once, no clearing.
		k := wo &^ 3
		if !vec.Is64[F]() && k == wo {
			// No row has a tail: one call for the plane, without a
			// call's overhead per row (rows of 4 to 12 windows in
			// fedem-cnn).
			scatterPool2Rows32(l.o.H, wo, ptr32(gp), &ap[0], ptr32(dst), int(off), w)
			return
		}
		for oy := range l.o.H {
			d0, d1 := dst[2*oy*w:(2*oy+1)*w], dst[(2*oy+1)*w:(2*oy+2)*w]
			g, a := gp[oy*wo:(oy+1)*wo], ap[oy*wo:(oy+1)*wo]
			if vec.Is64[F]() {
				scatterPool2Row64(k, ptr64(g), &a[0], ptr64(d0), ptr64(d1), int(off)+2*oy*w, w)
			} else {
				scatterPool2Rows32(1, k, ptr32(g), &a[0], ptr32(d0), int(off)+2*oy*w, w)
			}
			for ox := k; ox < wo; ox++ {
				d0[2*ox], d0[2*ox+1], d1[2*ox], d1[2*ox+1] = 0, 0, 0, 0
				dst[a[ox]-off] = 0 + g[ox]
			}
		}
		return
	}
	clear(dst)
	// Each input is the maximum of at most one window: store 0 + v, the
	// bits the addition to the cleared value gives (+0 for v = −0),
	// without loading it back.
	for i, v := range gp {
		dst[ap[i]-off] = 0 + v
	}
}

// tiles reports whether the pool's windows are 2×2 with stride 2 and
// cover its input planes, every input in one window.
func (l *pool[F]) tiles() bool {
	return l.kh == 2 && l.kw == 2 && l.s == 2 && l.in.H%2 == 0 && l.in.W%2 == 0
}

// disjoint reports whether no two windows share an input (stride at least
// the window's size).
func (l *pool[F]) disjoint() bool { return l.s >= l.kh && l.s >= l.kw }

// average writes the window means of x into y.
func (l *pool[F]) average(y, x []F, n int) {
	h, w, ho, wo := l.in.H, l.in.W, l.o.H, l.o.W
	inv := F(1 / float64(l.kh*l.kw))
	for p := range n * l.in.C {
		xp, yp := x[p*h*w:(p+1)*h*w], y[p*ho*wo:(p+1)*ho*wo]
		for oy := range ho {
			for ox := range wo {
				base := oy*l.s*w + ox*l.s
				var sum F
				for ky := range l.kh {
					for _, v := range xp[base+ky*w : base+ky*w+l.kw] {
						sum += v
					}
				}
				yp[oy*wo+ox] = sum * inv
			}
		}
	}
}

// spread writes into gx the adjoint of average applied to gy.
func (l *pool[F]) spread(gx, gy []F, n int) {
	h, w, ho, wo := l.in.H, l.in.W, l.o.H, l.o.W
	inv := F(1 / float64(l.kh*l.kw))
	clear(gx[:n*l.in.Size()])
	for p := range n * l.in.C {
		gp, yp := gx[p*h*w:(p+1)*h*w], gy[p*ho*wo:(p+1)*ho*wo]
		for oy := range ho {
			for ox := range wo {
				base := oy*l.s*w + ox*l.s
				v := yp[oy*wo+ox] * inv
				for ky := range l.kh {
					row := gp[base+ky*w : base+ky*w+l.kw]
					for i := range row {
						row[i] += v
					}
				}
			}
		}
	}
}

func (l *pool[F]) backward(gx, _, gy, _, _, _ []F, n int) {
	switch {
	case gx == nil:
	case l.max:
		l.scatter(gx, gy, n)
	default:
		l.spread(gx, gy, n)
	}
}

func (l *pool[F]) rforward(ry, rx, _, _, _, _ []F, n int) {
	switch {
	case rx == nil:
		clear(ry[:n*l.o.Size()])
	case l.max:
		l.gather(ry, rx, n)
	default:
		l.average(ry, rx, n)
	}
}

func (l *pool[F]) rbackward(gx, rgx, _, gy, rgy, _, _, _, _, _, _ []F, n int) {
	l.backward(gx, nil, gy, nil, nil, nil, n)
	l.backward(rgx, nil, rgy, nil, nil, nil, n)
}
