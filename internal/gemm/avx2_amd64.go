package gemm

import (
	"golang.org/x/sys/cpu"

	"hgpsim/internal/vec"
)

//go:generate go run ../../tools/gemmgen

// The assembly kernels replace the pure-Go ones where the CPU has AVX2 and
// HGPSIM_NOAVX2=1 is not set (vec's choice); DotNT's 4 × 4 tiles also need
// AVX-512VL for its 32 vector registers (its instructions stay 256 bits
// wide). The kernels run on 512-bit registers where the core executes them
// whole at the rate of 256-bit ones (cpuid.Wide512: Zen 5, Intel cores with
// two 512-bit units): there one instruction does the work of two. Zen 4
// splits them in two halves, so they would add nothing there.
// HGPSIM_NOAVX512=1 keeps them at 256 bits (vec's choice), to measure the
// difference or to rule it out; every path gives the same bits.
func init() {
	if !vec.HasAVX2() {
		return
	}
	dotNT, accNN, accTN, accNT = dotNTAVX2, accNNAVX2, accTNAVX2, accNTAVX2
	path = "avx2"
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		dotNT = dotNTAVX512
		path = "avx2, dot in 4×4 tiles (AVX-512VL)"
	}
	if vec.HasAVX512() {
		zmm = true
		path = "avx512: 512-bit registers, chain order in 6×16 tiles, dot order in 4×8"
	}
}

// zmm selects the 512-bit kernels.
var zmm bool

// Cache blocking of the AVX2 drivers, chosen by measuring the benchmark
// shapes interleaved on Zen 4 (32 kB L1, 1 MB L2); the products are within
// a few per cent of each other over kcAcc 128–512 and column blocks 32–256.
const (
	// kcAcc is the k panel of the chain-order kernels: a six-row sliver of
	// A (12 kB) stays in L1 over it.
	kcAcc = 256
	// ncAcc columns of an unpacked k panel of B (128 kB) stay in L2 while
	// the slivers of A sweep them.
	ncAcc = 64
	// mcAcc rows of Aᵀ are packed at a time (96 kB on the stack).
	mcAcc = 48
	// The packed paths take k panels of kcPack and pack nbPack columns
	// of one at a time (128 kB): half the k panel of the unpacked path
	// keeps a panel of A of up to 512 rows in L2 (when its leading
	// dimension is a multiple of 4 kB, only a narrow panel of Aᵀ fits,
	// its lines sharing few cache sets), and twice the columns halve how
	// often A's panel is read. Measured against kcAcc × 64: AccTN
	// 512×256×784 +12 %, AccNN and AccNT 512×256×784 +4–5 %.
	kcPack = 128
	nbPack = 128
	// DotNT keeps a block of dotL2 elements of B (384 kB) in L2 while a
	// tile's rows of A sweep it.
	dotL2 = 48 << 10
)

func dotNTAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	dotNTTiled(3, 3, 1, dotTile, m, n, k, a, lda, b, ldb, c, ldc)
}

// dotNTAVX512 runs 4 × 4 tiles of YMM registers or, with zmm, 4 × 8 tiles
// of two outputs a ZMM register (dotTileZ).
func dotNTAVX512(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if zmm {
		dotNTTiled(4, 8, 2, dotTileZ, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	dotNTTiled(4, 4, 1, dotTile, m, n, k, a, lda, b, ldb, c, ldc)
}

// dotTileZ runs the mr × nr kernel of two outputs a register (nr even).
func dotTileZ(mr, nr, nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	switch mr*16 + nr {
	case 1*16 + 2:
		dotKernZ1x2(nj, k, a, lda, b, ldb, c, ldc)
	case 1*16 + 4:
		dotKernZ1x4(nj, k, a, lda, b, ldb, c, ldc)
	case 1*16 + 6:
		dotKernZ1x6(nj, k, a, lda, b, ldb, c, ldc)
	case 1*16 + 8:
		dotKernZ1x8(nj, k, a, lda, b, ldb, c, ldc)
	case 2*16 + 2:
		dotKernZ2x2(nj, k, a, lda, b, ldb, c, ldc)
	case 2*16 + 4:
		dotKernZ2x4(nj, k, a, lda, b, ldb, c, ldc)
	case 2*16 + 6:
		dotKernZ2x6(nj, k, a, lda, b, ldb, c, ldc)
	case 2*16 + 8:
		dotKernZ2x8(nj, k, a, lda, b, ldb, c, ldc)
	case 3*16 + 2:
		dotKernZ3x2(nj, k, a, lda, b, ldb, c, ldc)
	case 3*16 + 4:
		dotKernZ3x4(nj, k, a, lda, b, ldb, c, ldc)
	case 3*16 + 6:
		dotKernZ3x6(nj, k, a, lda, b, ldb, c, ldc)
	case 3*16 + 8:
		dotKernZ3x8(nj, k, a, lda, b, ldb, c, ldc)
	case 4*16 + 2:
		dotKernZ4x2(nj, k, a, lda, b, ldb, c, ldc)
	case 4*16 + 4:
		dotKernZ4x4(nj, k, a, lda, b, ldb, c, ldc)
	case 4*16 + 6:
		dotKernZ4x6(nj, k, a, lda, b, ldb, c, ldc)
	case 4*16 + 8:
		dotKernZ4x8(nj, k, a, lda, b, ldb, c, ldc)
	default:
		panic("gemm: no 512-bit dot kernel for this tile")
	}
}

// dotNTTiled computes DotNT in tm × tn tiles, a row of tiles per kernel
// call of tile (3 × 3 with AVX2's sixteen registers, 4 × 4 with
// AVX-512VL's 32, 4 × 8 on ZMM registers), and the last tn − 1 columns or
// fewer in one narrower tile; a tile that holds outputs in pairs (pairs =
// 2) takes an even width, and a column left over runs dot's one-column
// kernel. The kernels sum each output exactly as dotRef does.
func dotNTTiled(tm, tn, pairs int, tile dotTiler, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	nc := max(tn, dotL2/k/tn*tn)
	for j0 := 0; j0 < n; j0 += nc {
		j1 := min(n, j0+nc)
		nj, rest := (j1-j0)/tn, (j1-j0)%tn
		for i := 0; i < m; i += tm {
			mr := min(tm, m-i)
			if nj > 0 {
				tile(mr, tn, nj, k, &a[i*lda], lda, &b[j0*ldb], ldb, &c[i*ldc+j0], ldc)
			}
			j := j0 + nj*tn
			if w := rest &^ (pairs - 1); w > 0 {
				tile(mr, w, 1, k, &a[i*lda], lda, &b[j*ldb], ldb, &c[i*ldc+j], ldc)
				j += w
			}
			if j < j1 {
				dotTile(mr, 1, 1, k, &a[i*lda], lda, &b[j*ldb], ldb, &c[i*ldc+j], ldc)
			}
		}
	}
}

// dotTiler runs an mr × nr tile kernel on nj tiles side by side.
type dotTiler func(mr, nr, nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)

// dotTile runs the mr × nr kernel; tiles with a side of 4 need AVX-512VL.
func dotTile(mr, nr, nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int) {
	switch mr*5 + nr {
	case 1*5 + 1:
		dotKern1x1(nj, k, a, lda, b, ldb, c, ldc)
	case 1*5 + 2:
		dotKern1x2(nj, k, a, lda, b, ldb, c, ldc)
	case 1*5 + 3:
		dotKern1x3(nj, k, a, lda, b, ldb, c, ldc)
	case 1*5 + 4:
		dotKernX1x4(nj, k, a, lda, b, ldb, c, ldc)
	case 2*5 + 1:
		dotKern2x1(nj, k, a, lda, b, ldb, c, ldc)
	case 2*5 + 2:
		dotKern2x2(nj, k, a, lda, b, ldb, c, ldc)
	case 2*5 + 3:
		dotKern2x3(nj, k, a, lda, b, ldb, c, ldc)
	case 2*5 + 4:
		dotKernX2x4(nj, k, a, lda, b, ldb, c, ldc)
	case 3*5 + 1:
		dotKern3x1(nj, k, a, lda, b, ldb, c, ldc)
	case 3*5 + 2:
		dotKern3x2(nj, k, a, lda, b, ldb, c, ldc)
	case 3*5 + 3:
		dotKern3x3(nj, k, a, lda, b, ldb, c, ldc)
	case 3*5 + 4:
		dotKernX3x4(nj, k, a, lda, b, ldb, c, ldc)
	case 4*5 + 1:
		dotKernX4x1(nj, k, a, lda, b, ldb, c, ldc)
	case 4*5 + 2:
		dotKernX4x2(nj, k, a, lda, b, ldb, c, ldc)
	case 4*5 + 3:
		dotKernX4x3(nj, k, a, lda, b, ldb, c, ldc)
	case 4*5 + 4:
		dotKernX4x4(nj, k, a, lda, b, ldb, c, ldc)
	default:
		panic("gemm: no dot kernel for this tile")
	}
}

// accAVX2 adds Σ_p A(i, p)·b[p·ldb+j] to c[i·ldc+j] in chain order, where
// A(i, p) = a[i·rs+p·ks]. Each k panel adds its products to C after the
// previous panel's, so splitting k keeps every chain in increasing p.
//
// With block not nil (at least min(m, mcAcc)·min(k, kcAcc) elements),
// each block of mcAcc rows of a k panel of A is first copied into it,
// sliver by sliver (mr ≤ 6 rows, element (r, p) at p·mr+r). Aᵀ needs it:
// a sliver's elements lie one leading dimension apart, and when that is a
// multiple of 4 kB a panel's rows all fall into one cache set and each
// onto its own page. The caller declares the array, so only callers that
// pack pay for clearing it.
func accAVX2(m, n, k int, a []float64, rs, ks int, b []float64, ldb int, c []float64, ldc int, block []float64) {
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
					if mr == 6 && rs == 1 {
						// Aᵀ: the six values of one p are contiguous.
						_, _ = s[kb*6-1], ap[(kb-1)*ks+5] // bounds of packRows6's copy
						packRows6(kb, &ap[0], ks, &s[0])
						continue
					}
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
					if nj := (j1 - j) / 16; zmm && nj > 0 {
						accTile(mr, 16, nj, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, 16, &c[i*ldc+j], ldc)
						j += 16 * nj
					}
					if nj := (j1 - j) / 8; nj > 0 {
						accTile(mr, 8, nj, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, 8, &c[i*ldc+j], ldc)
						j += 8 * nj
					}
					if j+4 <= j1 {
						accTile(mr, 4, 1, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, 0, &c[i*ldc+j], ldc)
						j += 4
					}
					if j < j1 {
						accTail(mr, j1-j, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, &c[i*ldc+j], ldc)
					}
				}
			}
		}
	}
}

// accTile runs the mr × nr chain-order kernel (nr = 16, 8 or 4; 16 only
// with zmm) on nj tiles side by side.
func accTile(mr, nr, nj, kc int, a *float64, rs, ks int, b *float64, ldb, bstep int, c *float64, ldc int) {
	if zmm && nr >= 8 {
		accTileZ(mr, nr, nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
		return
	}
	if nr == 8 {
		switch mr {
		case 1:
			accKern1x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
		case 2:
			accKern2x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
		case 3:
			accKern3x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
		case 4:
			accKern4x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
		case 5:
			accKern5x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
		default:
			accKern6x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
		}
		return
	}
	switch mr {
	case 1:
		accKern1x4(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 2:
		accKern2x4(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 3:
		accKern3x4(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 4:
		accKern4x4(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 5:
		accKern5x4(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	default:
		accKern6x4(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	}
}

// accTileZ is accTile's 512-bit path for nr = 16 and 8.
func accTileZ(mr, nr, nj, kc int, a *float64, rs, ks int, b *float64, ldb, bstep int, c *float64, ldc int) {
	switch mr*32 + nr {
	case 1*32 + 16:
		accKernZ1x16(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 2*32 + 16:
		accKernZ2x16(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 3*32 + 16:
		accKernZ3x16(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 4*32 + 16:
		accKernZ4x16(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 5*32 + 16:
		accKernZ5x16(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 6*32 + 16:
		accKernZ6x16(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 1*32 + 8:
		accKernZ1x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 2*32 + 8:
		accKernZ2x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 3*32 + 8:
		accKernZ3x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 4*32 + 8:
		accKernZ4x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 5*32 + 8:
		accKernZ5x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	case 6*32 + 8:
		accKernZ6x8(nj, kc, a, rs, ks, b, ldb, bstep, c, ldc)
	default:
		panic("gemm: no 512-bit chain kernel for this tile")
	}
}

// tailMasks[w] selects the first w lanes of a vector for VMASKMOVPD.
var tailMasks = [4][4]int64{{}, {-1}, {-1, -1}, {-1, -1, -1}}

// accTail runs the masked mr × w chain-order kernel, 1 ≤ w ≤ 3: the last
// columns of a product whose width is not a multiple of four. It touches
// only the w columns of B and C, so the caller's bounds checks of the
// tile's first element and of B's and C's last rows cover it.
func accTail(mr, w, kc int, a *float64, rs, ks int, b *float64, ldb int, c *float64, ldc int) {
	mask := &tailMasks[w]
	switch mr {
	case 1:
		accKern1xm(1, kc, a, rs, ks, b, ldb, 0, c, ldc, mask)
	case 2:
		accKern2xm(1, kc, a, rs, ks, b, ldb, 0, c, ldc, mask)
	case 3:
		accKern3xm(1, kc, a, rs, ks, b, ldb, 0, c, ldc, mask)
	case 4:
		accKern4xm(1, kc, a, rs, ks, b, ldb, 0, c, ldc, mask)
	case 5:
		accKern5xm(1, kc, a, rs, ks, b, ldb, 0, c, ldc, mask)
	default:
		accKern6xm(1, kc, a, rs, ks, b, ldb, 0, c, ldc, mask)
	}
}

// When to pack, measured interleaved on both sides of each bound. Packing
// copies k·n elements of B (and, for Aᵀ, six-row slivers of A) and clears
// a 128 kB stack array, which pays back over enough rows of A. For AccNN,
// whose B already has contiguous rows, it pays from 96 rows and k ≥ 64
// (k = 32 loses 14 % at 128 rows), or from 24 rows and k ≥ 128 where B's
// rows are wide (several column blocks) or not a multiple of four
// elements long (unpacked, their vector loads straddle cache lines: +20 %
// at 64 × 121 × 576). AccTN packs from 24 rows: its unpacked path packs
// blocks of Aᵀ anyway and runs 15–40 % slower; with 10–20 rows and wide B
// the unpacked path is 10–15 % faster.
func packNN(m, n, k, ldb int) bool {
	return m >= 96 && k >= 64 || m >= 24 && k >= 128 && (n > ncAcc || ldb%4 != 0)
}

func packTN(m, k int) bool {
	// On 512-bit registers the unpacked path's 16-column tiles run 7–11 %
	// faster than the packed one (Zen 5, 64 × 784 × 128 and 512 × 256 × 784).
	return !zmm && m >= 24 && k >= 32
}

func accNNAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if packNN(m, n, k, ldb) {
		accNNPacked(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	accNNDirect(m, n, k, a, lda, b, ldb, c, ldc)
}

func accTNAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if packTN(m, k) {
		accTNPacked(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	accTNDirect(m, n, k, a, lda, b, ldb, c, ldc)
}

func accNNDirect(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accAVX2(m, n, k, a, lda, 1, b, ldb, c, ldc, nil)
}

// accTNDirect packs blocks of Aᵀ into a stack array sized to the shape:
// Go clears it on every call, which would cost small products more than
// their arithmetic.
func accTNDirect(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	need := min(m, mcAcc) * min(k, kcAcc)
	switch {
	case need <= 1<<10:
		var block [1 << 10]float64
		accAVX2(m, n, k, a, 1, lda, b, ldb, c, ldc, block[:need])
	case need <= 1<<12:
		var block [1 << 12]float64
		accAVX2(m, n, k, a, 1, lda, b, ldb, c, ldc, block[:need])
	default:
		var block [mcAcc * kcAcc]float64
		accAVX2(m, n, k, a, 1, lda, b, ldb, c, ldc, block[:need])
	}
}

// The packed paths run where packNN and packTN choose them, except
// AccNT's, whose panel is sized to the shape as accTNDirect's block is.
func accNNPacked(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	var bblock [kcPack * nbPack]float64
	accPacked(m, n, k, a, lda, 1, b, ldb, 1, c, ldc, bblock[:], nil)
}

func accTNPacked(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	var bblock [kcPack * nbPack]float64
	var sliver [6 * kcPack]float64
	accPacked(m, n, k, a, 1, lda, b, ldb, 1, c, ldc, bblock[:], sliver[:])
}

// accNTAVX2 always packs: the kernels need B's columns contiguous, and Bᵀ
// has its rows so.
func accNTAVX2(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	need := min(k, kcPack) * min(n, nbPack)
	switch {
	case need <= 1<<10:
		var bblock [1 << 10]float64
		accPacked(m, n, k, a, lda, 1, b, 1, ldb, c, ldc, bblock[:need], nil)
	case need <= 1<<12:
		var bblock [1 << 12]float64
		accPacked(m, n, k, a, lda, 1, b, 1, ldb, c, ldc, bblock[:need], nil)
	default:
		var bblock [kcPack * nbPack]float64
		accPacked(m, n, k, a, lda, 1, b, 1, ldb, c, ldc, bblock[:need], nil)
	}
}
