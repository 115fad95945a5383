package nn

import "hgpsim/internal/vec"

// The patch matrices of a convolution (im2col and its adjoint col2im) and
// their rows. The AVX kernels (patch_amd64.s, patch32_amd64.s) move or add
// values one by one as the Go loops do, so either gives the same bits.

// im2col writes the patch matrices of the m samples of x into col (leading
// dimension m·P, sample j in columns j·P to (j+1)·P): row (c·KH + ky)·KW + kx,
// column oy·Wo + ox of a sample holds x[c][oy·s−pad+ky][ox·s−pad+kx], 0 in
// the padding.
func (l *conv[F]) im2col(col, x []F, m int) {
	h, w, wo, s := l.in.H, l.in.W, l.o.W, l.s
	ld := m * l.p
	if s == 1 && l.pad == 0 {
		l.im2colDense(col, x, m)
		return
	}
	for j := range m {
		xj := x[j*l.in.Size() : (j+1)*l.in.Size()]
		r := 0
		for c := range l.in.C {
			plane := xj[c*h*w : (c+1)*h*w]
			for ky := range l.kh {
				for kx := range l.kw {
					row := col[r*ld+j*l.p : r*ld+(j+1)*l.p]
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
}

// im2row writes the patches of the m samples of x as rows of dst: the
// patch of output position p of sample j (im2col's column) at
// dst[(j·P+p)·ld+off:][:K], in im2col's row order.
func (l *conv[F]) im2row(dst []F, ld, off int, x []F, m int) {
	if l.s == 1 && l.pad == 0 {
		l.im2rowDense(dst, ld, off, x, m)
		return
	}
	h, w, ho, wo, kh, kw, s := l.in.H, l.in.W, l.o.H, l.o.W, l.kh, l.kw, l.s
	ni, p := l.in.Size(), l.p
	for j := range m {
		xj := x[j*ni : (j+1)*ni]
		for oy := range ho {
			for ox := range wo {
				r := dst[(j*p+oy*wo+ox)*ld+off:]
				r = r[:l.k]
				t := 0
				for c := range l.in.C {
					for ky := range kh {
						iy := oy*s - l.pad + ky
						for kx := range kw {
							ix := ox*s - l.pad + kx
							var v F
							if iy >= 0 && iy < h && ix >= 0 && ix < w {
								v = xj[(c*h+iy)*w+ix]
							}
							r[t] = v
							t++
						}
					}
				}
			}
		}
	}
}

// im2rowDense is im2row for stride 1 without padding: each patch row is
// C·KH runs of KW consecutive inputs, which start at l.runs[i] past the
// input of the position's top-left corner. Runs of 3 and 5 (the presets'
// kernels) are unrolled: copy would call memmove for each, and computing
// each run's offset in the loop made the rows cost half the product. With
// AVX, runs of 5 are one 32-byte and one 8-byte move each (patchRow5):
// fedem-cnn's second convolution's rows for a batch of 128 took 2.7 ms
// unrolled in Go, 1.1 ms so, three times per Hessian-vector product.
func (l *conv[F]) im2rowDense(dst []F, ld, off int, x []F, m int) {
	w, ho, wo, kw := l.in.W, l.o.H, l.o.W, l.kw
	ni, p := l.in.Size(), l.p
	runs := l.runs
	vector := patchVector && vec.Is64[F]() // outside the loops: a type test reads the dictionary
	vector32 := patchVector && !vec.Is64[F]() && (kw == 3 || kw == 5) && len(runs) > 0
	for j := range m {
		xj := x[j*ni : (j+1)*ni]
		for oy := range ho {
			if vector32 {
				// Bounds of the kernel's last move: the last run of the
				// row's last position (runs increase).
				d0 := (j*p+oy*wo)*ld + off
				_ = dst[d0+(wo-1)*ld+len(runs)*kw-1]
				_ = xj[oy*w+wo-1+runs[len(runs)-1]+kw-1]
				patchRows32(kw, wo, len(runs), ptr32(dst[d0:]), ld, ptr32(xj[oy*w:]), &runs[0])
				continue
			}
			for ox := range wo {
				r := dst[(j*p+oy*wo+ox)*ld+off:]
				r = r[:len(runs)*kw]
				src := xj[oy*w+ox:]
				switch kw {
				case 3:
					for i, o := range runs {
						s := src[o : o+3 : o+3]
						d := r[3*i : 3*i+3 : 3*i+3]
						d[0], d[1], d[2] = s[0], s[1], s[2]
					}
				case 5:
					if vector && len(runs) > 0 {
						// Bounds of the kernel's first and last moves.
						_, _ = r[5*len(runs)-1], src[runs[len(runs)-1]+4]
						patchRow5(len(runs), ptr64(r), ptr64(src), &runs[0])
						continue
					}
					for i, o := range runs {
						s := src[o : o+5 : o+5]
						d := r[5*i : 5*i+5 : 5*i+5]
						d[0], d[1], d[2], d[3], d[4] = s[0], s[1], s[2], s[3], s[4]
					}
				default:
					for i, o := range runs {
						copy(r[kw*i:kw*i+kw], src[o:o+kw])
					}
				}
			}
		}
	}
}

// runsMaxW bounds the output widths for which im2colDense copies every
// row of a patch matrix run by run from the input (copyRuns) rather than
// from the row before: short rows make that row's copy and its new run two
// calls of memmove for little data. A batch of 128 patch matrices of
// norm-16-32's second convolution (16×12×12 in, Wo = 8) took 0.60 ms
// row from row and 0.51 ms run by run; its first (1×28×28, Wo = 24) 0.14
// and 0.18 ms.
const runsMaxW = 16

// runsMaxW32 is runsMaxW for float32, whose runs of up to eight values are
// one YMM register: at Wo = 8 (fedem-cnn's and norm-16-32's second
// convolutions) fedem-cnn's HVP took 58.5 ms run by run against 59.2 row
// from row (medians of 8 alternating runs, Zen 5) and norm-16-32's gradient
// 6.92 against 7.05; at lenet's Wo = 10 run by run was 1 % slower.
const runsMaxW32 = 8

// im2colDense is im2col for stride 1 without padding, the common case:
// every row of a patch matrix is Ho runs of Wo consecutive input values,
// with no bounds to check. Row (c, ky, kx) is row (c, ky−1, kx) moved by
// one output row, plus one new run: so for ky ≥ 1 it is one long copy
// from the row just written (in L1) and one run from the input, where
// copying run by run makes Ho short copies per row. The first row's Ho
// runs are copied by copyRuns with AVX (each run a call of memmove
// otherwise: 8 values in fedem-cnn's second convolution), and so are all
// rows for Wo ≤ runsMaxW.
func (l *conv[F]) im2colDense(col, x []F, m int) {
	h, w, ho, wo, kh, kw := l.in.H, l.in.W, l.o.H, l.o.W, l.kh, l.kw
	ld, p := m*l.p, l.p
	vector := patchVector && vec.Is64[F]()
	vector32 := patchVector && !vec.Is64[F]()
	for j := range m {
		xj := x[j*l.in.Size() : (j+1)*l.in.Size()]
		for c := range l.in.C {
			plane := xj[c*h*w : (c+1)*h*w]
			for kx := range kw {
				r := c * kh * kw
				prev := col[(r+kx)*ld+j*p : (r+kx)*ld+(j+1)*p]
				src := plane[kx:]
				switch {
				case vector && wo <= runsMaxW, vector32 && wo <= runsMaxW32:
					// Bounds of the last run's source.
					_ = src[(kh-1+ho-1)*w+wo-1]
					for ky := range kh {
						rr := r + ky*kw + kx
						dst := col[rr*ld+j*p : (rr+1)*ld]
						if vector {
							copyRuns(ho, wo, ptr64(dst), wo, ptr64(src[ky*w:]), w)
						} else {
							copyRuns32(ho, wo, ptr32(dst), wo, ptr32(src[ky*w:]), w)
						}
					}
					continue
				case vector:
					// Bounds of the last run's source (prev has ho·wo).
					_ = src[(ho-1)*w+wo-1]
					copyRuns(ho, wo, ptr64(prev), wo, ptr64(src), w)
				case vector32:
					_ = src[(ho-1)*w+wo-1]
					copyRuns32(ho, wo, ptr32(prev), wo, ptr32(src), w)
				default:
					for oy := range ho {
						copy(prev[oy*wo:(oy+1)*wo], src[oy*w:oy*w+wo])
					}
				}
				for ky := 1; ky < kh; ky++ {
					rr := r + ky*kw + kx
					row := col[rr*ld+j*p : rr*ld+(j+1)*p]
					copy(row[:(ho-1)*wo], prev[wo:])
					o := (ho - 1 + ky) * w
					copy(row[(ho-1)*wo:], src[o:o+wo])
					prev = row
				}
			}
		}
	}
}

// col2im writes into gx (m samples) the sum, over the patch-matrix entries
// that read each input value, of gcol (laid out as im2col's col, with
// leading dimension ld ≥ mP): the adjoint of im2col.
func (l *conv[F]) col2im(gx, gcol []F, ld, m int) {
	h, w, wo, s := l.in.H, l.in.W, l.o.W, l.s
	clear(gx[:m*l.in.Size()])
	if s == 1 && l.pad == 0 {
		l.col2imDense(gx, gcol, ld, m)
		return
	}
	for j := range m {
		gj := gx[j*l.in.Size() : (j+1)*l.in.Size()]
		r := 0
		for c := range l.in.C {
			plane := gj[c*h*w : (c+1)*h*w]
			for ky := range l.kh {
				for kx := range l.kw {
					row := gcol[r*ld+j*l.p : r*ld+(j+1)*l.p]
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
}

// col2imDense is col2im for stride 1 without padding, into a cleared gx.
// With AVX each row of gcol is added by addRuns, four values a vector:
// each value still takes its terms one by one in the same order (about
// twice as fast at fedem-cnn's and norm-16-32's second convolutions).
func (l *conv[F]) col2imDense(gx, gcol []F, ld, m int) {
	h, w, ho, wo := l.in.H, l.in.W, l.o.H, l.o.W
	vector := patchVector && vec.Is64[F]()
	vector32 := patchVector && !vec.Is64[F]()
	for j := range m {
		gj := gx[j*l.in.Size() : (j+1)*l.in.Size()]
		r := 0
		for c := range l.in.C {
			plane := gj[c*h*w : (c+1)*h*w]
			for ky := range l.kh {
				for kx := range l.kw {
					row := gcol[r*ld+j*l.p : r*ld+(j+1)*l.p]
					r++
					dst := plane[ky*w+kx:]
					if vector {
						// Bounds of the last run (row has ho·wo).
						_ = dst[(ho-1)*w+wo-1]
						addRuns(ho, wo, ptr64(dst), w, ptr64(row), wo)
						continue
					}
					if vector32 {
						_ = dst[(ho-1)*w+wo-1]
						addRuns32(ho, wo, ptr32(dst), w, ptr32(row), wo)
						continue
					}
					for oy := range ho {
						src := row[oy*wo : (oy+1)*wo]
						d := dst[oy*w:]
						d = d[:len(src)]
						for i, v := range src {
							d[i] += v
						}
					}
				}
			}
		}
	}
}
