package gemm

import (
	"golang.org/x/sys/cpu"

	"hgpsim/internal/vec"
)

//go:generate go run gen.go

// The assembly kernels replace the pure-Go ones where the CPU has AVX2 and
// HGPSIM_NOAVX2=1 is not set (vec's choice); DotNT's 4 × 4 tiles also need
// AVX-512VL for its 32 vector registers (the instructions stay 256 bits
// wide: Zen 4 splits 512-bit operations in two, so they would add nothing).
func init() {
	if !vec.HasAVX2() {
		return
	}
	dotNT, accNN, accTN, accNT = dotNTAVX2, accNNAVX2, accTNAVX2, accNTAVX2
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		dotNT = dotNTAVX512
	}
}

// Cache blocking of the AVX2 drivers. A k panel of kcAcc rows of B and a
// block of ncAcc columns (kcAcc·ncAcc·8 bytes = 256 kB) stays in L2 while
// every six-row sliver of A (6·kcAcc·8 = 12 kB) sweeps it from L1.
var (
	kcAcc = 256
	ncAcc = 128
	mcAcc = 48 // rows of A packed at a time (96 kB on the stack)
)

const blockCap = 16384
const panelCap = 8192

// The packed panel of AccNT: kcNT × ncNT elements of Bᵀ on the stack
// (64 kB), so a call allocates nothing and needs no workspace argument.
var (
	kcNT = 256
	ncNT = 32
)

// DotNT keeps a block of ncDot rows of B (at most 384 kB for k = 784) in
// L2 while three rows of A at a time sweep it.
var dotL2 = 48 << 10 // elements

func dotNTAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	dotNTTiled(3, m, n, k, a, lda, b, ldb, c, ldc)
}

func dotNTAVX512(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	dotNTTiled(4, m, n, k, a, lda, b, ldb, c, ldc)
}

// dotNTTiled computes DotNT in t × t tiles (t = 3 with AVX2's sixteen
// registers, 4 with AVX-512VL's 32): dotKern gives the four partial sums
// of every output's whole blocks of four, and finishDot adds the tail and
// combines them, so each output is summed exactly as dotRef sums it.
func dotNTTiled(t, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	nc := max(t, dotL2/k/t*t)
	var lanes [64]float64
	for j0 := 0; j0 < n; j0 += nc {
		j1 := min(n, j0+nc)
		for i := 0; i < m; i += t {
			mr := min(t, m-i)
			for j := j0; j < j1; j += t {
				nr := min(t, j1-j)
				dotTile(mr, nr, k>>2, &a[i*lda], lda, &b[j*ldb], ldb, &lanes[0])
				finishDot(mr, nr, k, a[i*lda:], lda, b[j*ldb:], ldb, c[i*ldc+j:], ldc, &lanes)
			}
		}
	}
}

// finishDot adds the elements after the last whole block of four to s_0
// and writes (s_0 + s_2) + (s_1 + s_3) for each output of a tile.
func finishDot(mr, nr, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, lanes *[64]float64) {
	for r := range mr {
		for q := range nr {
			l := lanes[(r*nr+q)*4 : (r*nr+q)*4+4 : (r*nr+q)*4+4]
			s0 := l[0]
			for p := k &^ 3; p < k; p++ {
				s0 += float64(a[r*lda+p] * b[q*ldb+p])
			}
			c[r*ldc+q] = (s0 + l[2]) + (l[1] + l[3])
		}
	}
}

// dotTile runs the mr × nr kernel; tiles with a side of 4 need AVX-512VL.
func dotTile(mr, nr, k4 int, a *float64, lda int, b *float64, ldb int, out *float64) {
	switch mr*5 + nr {
	case 1*5 + 1:
		dotKern1x1(k4, a, lda, b, ldb, out)
	case 1*5 + 2:
		dotKern1x2(k4, a, lda, b, ldb, out)
	case 1*5 + 3:
		dotKern1x3(k4, a, lda, b, ldb, out)
	case 1*5 + 4:
		dotKernX1x4(k4, a, lda, b, ldb, out)
	case 2*5 + 1:
		dotKern2x1(k4, a, lda, b, ldb, out)
	case 2*5 + 2:
		dotKern2x2(k4, a, lda, b, ldb, out)
	case 2*5 + 3:
		dotKern2x3(k4, a, lda, b, ldb, out)
	case 2*5 + 4:
		dotKernX2x4(k4, a, lda, b, ldb, out)
	case 3*5 + 1:
		dotKern3x1(k4, a, lda, b, ldb, out)
	case 3*5 + 2:
		dotKern3x2(k4, a, lda, b, ldb, out)
	case 3*5 + 3:
		dotKern3x3(k4, a, lda, b, ldb, out)
	case 3*5 + 4:
		dotKernX3x4(k4, a, lda, b, ldb, out)
	case 4*5 + 1:
		dotKernX4x1(k4, a, lda, b, ldb, out)
	case 4*5 + 2:
		dotKernX4x2(k4, a, lda, b, ldb, out)
	case 4*5 + 3:
		dotKernX4x3(k4, a, lda, b, ldb, out)
	case 4*5 + 4:
		dotKernX4x4(k4, a, lda, b, ldb, out)
	default:
		panic("gemm: no dot kernel for this tile")
	}
}

// accAVX2 adds Σ_p A(i, p)·b[p·ldb+j] to c[i·ldc+j] in chain order, where
// A(i, p) = a[i·rs+p·ks]. Each k panel adds its products to C after the
// previous panel's, so splitting k keeps every chain in increasing p.
//
// With block not nil, each block of mcAcc rows of a k panel of A is first copied
// into a stack array, sliver by sliver (six rows, element (r, p) at p·6+r).
// Aᵀ needs it: a sliver's elements lie one leading dimension apart, and
// when that is a multiple of 4 kB a panel's rows all fall into one cache
// set and each onto its own page.
// The caller owns the array, so only AccTN pays for zeroing it.
func accAVX2(m, n, k int, a []float64, rs, ks int, b []float64, ldb int, c []float64, ldc int, block *[blockCap]float64) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	pack := block != nil
	for p0 := 0; p0 < k; p0 += kcAcc {
		kb := min(kcAcc, k-p0)
		for i0 := 0; i0 < m; i0 += mcAcc {
			i1 := min(m, i0+mcAcc)
			if pack {
				for i := i0; i < i1; i += 6 {
					mr := min(6, i1-i)
					s := block[(i-i0)*kb : (i-i0+mr)*kb]
					ap := a[i*rs+p0*ks:]
					for p := range kb {
						for r := range mr {
							s[p*mr+r] = ap[r*rs+p*ks]
						}
					}
				}
			}
			for j0 := 0; j0 < n; j0 += ncAcc {
				j1 := min(n, j0+ncAcc)
				for i := i0; i < i1; i += 6 {
					mr := min(6, i1-i)
					ap, ars, aks := a[i*rs+p0*ks:], rs, ks
					if pack {
						ap, ars, aks = block[(i-i0)*kb:(i-i0+mr)*kb], 1, mr
					}
					j := j0
					for ; j+8 <= j1; j += 8 {
						accTile(mr, 8, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, &c[i*ldc+j], ldc)
					}
					if j+4 <= j1 {
						accTile(mr, 4, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, &c[i*ldc+j], ldc)
						j += 4
					}
					for ; j < j1; j++ {
						for r := range mr {
							o := (i+r)*ldc + j
							c[o] = chain(c[o], kb, ap[r*ars:], aks, b[p0*ldb+j:], ldb)
						}
					}
				}
			}
		}
	}
}

func accTile(mr, nr, kc int, a *float64, rs, ks int, b *float64, ldb int, c *float64, ldc int) {
	if nr == 8 {
		switch mr {
		case 1:
			accKern1x8(kc, a, rs, ks, b, ldb, c, ldc)
		case 2:
			accKern2x8(kc, a, rs, ks, b, ldb, c, ldc)
		case 3:
			accKern3x8(kc, a, rs, ks, b, ldb, c, ldc)
		case 4:
			accKern4x8(kc, a, rs, ks, b, ldb, c, ldc)
		case 5:
			accKern5x8(kc, a, rs, ks, b, ldb, c, ldc)
		default:
			accKern6x8(kc, a, rs, ks, b, ldb, c, ldc)
		}
		return
	}
	switch mr {
	case 1:
		accKern1x4(kc, a, rs, ks, b, ldb, c, ldc)
	case 2:
		accKern2x4(kc, a, rs, ks, b, ldb, c, ldc)
	case 3:
		accKern3x4(kc, a, rs, ks, b, ldb, c, ldc)
	case 4:
		accKern4x4(kc, a, rs, ks, b, ldb, c, ldc)
	case 5:
		accKern5x4(kc, a, rs, ks, b, ldb, c, ldc)
	default:
		accKern6x4(kc, a, rs, ks, b, ldb, c, ldc)
	}
}

func accNNAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accAVX2(m, n, k, a, lda, 1, b, ldb, c, ldc, nil)
}

func accTNAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	var block [blockCap]float64
	accAVX2(m, n, k, a, 1, lda, b, ldb, c, ldc, &block)
}

// accNTAVX2 packs a kcNT × ncNT panel of Bᵀ at a time into a stack array
// and runs the AccNN kernels on it; the panels go in increasing k, so the
// chains stay in order.
func accNTAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	var panel [panelCap]float64
	for p0 := 0; p0 < k; p0 += kcNT {
		kb := min(kcNT, k-p0)
		for j0 := 0; j0 < n; j0 += ncNT {
			nb := min(ncNT, n-j0)
			for j := range nb {
				bj := b[(j0+j)*ldb+p0 : (j0+j)*ldb+p0+kb]
				for p, v := range bj {
					panel[p*nb+j] = v
				}
			}
			accAVX2(m, nb, kb, a[p0:], lda, 1, panel[:kb*nb], nb, c[j0:], ldc, nil)
		}
	}
}
