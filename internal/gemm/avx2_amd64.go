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
	// The kernels' products are fused multiply-adds: FMA3 is a CPUID bit
	// of its own, which a virtual machine may hide while it shows AVX2.
	if !vec.HasAVX2() || !cpu.X86.HasFMA {
		return
	}
	dotNT, accNN, accTN, accNT = dotNTAVX2[float64], accNNAVX2[float64], accTNAVX2[float64], accNTAVX2[float64]
	dotNT32, accNN32, accTN32, accNT32 = dotNTAVX2[float32], accNNAVX2[float32], accTNAVX2[float32], accNTAVX2[float32]
	path = "avx2"
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		dotNT, dotNT32 = dotNTAVX512[float64], dotNTAVX512[float32]
		path = "avx2, dot in 4×4 tiles (float32 4×3) on AVX-512VL"
	}
	if vec.HasAVX512() {
		zmm = true
		path = "avx512: 512-bit registers, chain order in 6×16 tiles (float32 6×32), dot order in 6×8 (float32 6×4)"
	}
}

// zmm selects the 512-bit kernels.
var zmm bool

// Cache blocking of the AVX2 drivers, chosen by measuring the benchmark
// shapes interleaved on Zen 4 (32 kB L1, 1 MB L2); the products are within
// a few per cent of each other over kcAcc 128–512 and column blocks 32–256.
// The sizes count elements; float32 products use the same counts
// (half the bytes) except where a bound is given in bytes.
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
	// DotNT keeps a block of dotL2 bytes of B in L2 while a tile's rows
	// of A sweep it.
	dotL2 = 384 << 10
)

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
func accAVX2[F Float](m, n, k int, a []F, rs, ks int, b []F, ldb int, c []F, ldc int, block []F) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	pack := block != nil
	L := lanes[F]() // tiles are 4L (zmm), 2L and L columns wide
	for p0 := 0; p0 < k; p0 += kcAcc {
		kb := min(kcAcc, k-p0)
		for i0 := 0; i0 < m; i0 += mcAcc {
			i1 := min(m, i0+mcAcc)
			switch {
			case pack && rs == 1 && i1-i0 == 48:
				// Aᵀ, a whole block: one walk over p (packBlock48).
				_, _ = block[48*kb-1], a[i0+p0*ks+(kb-1)*ks+47] // bounds of the copy
				packBlockF(kb, &a[i0+p0*ks], ks, &block[0])
			case pack:
				for i := i0; i < i1; i += 6 {
					mr := min(6, i1-i)
					s := block[(i-i0)*kb : (i-i0+mr)*kb]
					ap := a[i*rs+p0*ks:]
					if mr == 6 && rs == 1 {
						// Aᵀ: the six values of one p are contiguous.
						_, _ = s[kb*6-1], ap[(kb-1)*ks+5] // bounds of packRows6's copy
						packRowsF(6, kb, &ap[0], ks, &s[0])
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
					if nj := (j1 - j) / (4 * L); zmm && nj > 0 {
						accTileF(mr, 4*L, nj, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, 4*L, &c[i*ldc+j], ldc)
						j += 4 * L * nj
					}
					if nj := (j1 - j) / (2 * L); nj > 0 {
						accTileF(mr, 2*L, nj, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, 2*L, &c[i*ldc+j], ldc)
						j += 2 * L * nj
					}
					if j+L <= j1 {
						accTileF(mr, L, 1, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, 0, &c[i*ldc+j], ldc)
						j += L
					}
					if j < j1 {
						accTailF(mr, j1-j, kb, &ap[0], ars, aks, &b[p0*ldb+j], ldb, &c[i*ldc+j], ldc)
					}
				}
			}
		}
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
// the unpacked path is 10–15 % faster. In float32 (L = 8) only the first
// rule holds: on Zen 5's 512-bit tiles the unpacked path ran 10–17 %
// faster at 64 × 121 × 576 and 200 × 121 × 300, and as fast at
// 128 × 784 × 64 and 1936 × 64 × 576.
func packNN(m, n, k, ldb, L int) bool {
	return m >= 96 && k >= 64 || L == 4 && m >= 24 && k >= 128 && (n > ncAcc || ldb%4 != 0)
}

func packTN(m, k int) bool {
	// On 512-bit registers the unpacked path's 16-column tiles run 7–11 %
	// faster than the packed one (Zen 5, 64 × 784 × 128 and 512 × 256 × 784).
	return !zmm && m >= 24 && k >= 32
}

func accNNAVX2[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if packNN(m, n, k, ldb, lanes[F]()) {
		accNNPacked(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	accNNDirect(m, n, k, a, lda, b, ldb, c, ldc)
}

func accTNAVX2[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if packTN(m, k) {
		accTNPacked(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	accTNDirect(m, n, k, a, lda, b, ldb, c, ldc)
}

func accNNDirect[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	accAVX2(m, n, k, a, lda, 1, b, ldb, c, ldc, nil)
}

// accTNDirect packs blocks of Aᵀ into a stack array sized to the shape:
// Go clears it on every call, which would cost small products more than
// their arithmetic.
func accTNDirect[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	need := min(m, mcAcc) * min(k, kcAcc)
	switch {
	case need <= 1<<10:
		var block [1 << 10]F
		accAVX2(m, n, k, a, 1, lda, b, ldb, c, ldc, block[:need])
	case need <= 1<<12:
		var block [1 << 12]F
		accAVX2(m, n, k, a, 1, lda, b, ldb, c, ldc, block[:need])
	default:
		var block [mcAcc * kcAcc]F
		accAVX2(m, n, k, a, 1, lda, b, ldb, c, ldc, block[:need])
	}
}

// The packed paths run where packNN and packTN choose them, except
// AccNT's, whose panel is sized to the shape as accTNDirect's block is.
func accNNPacked[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	var bblock [kcPack * nbPack]F
	accPacked(m, n, k, a, lda, 1, b, ldb, 1, c, ldc, bblock[:], nil)
}

func accTNPacked[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	var bblock [kcPack * nbPack]F
	var sliver [6 * kcPack]F
	accPacked(m, n, k, a, 1, lda, b, ldb, 1, c, ldc, bblock[:], sliver[:])
}

// accNTAVX2 always packs: the kernels need B's columns contiguous, and Bᵀ
// has its rows so.
func accNTAVX2[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	need := min(k, kcPack) * min(n, nbPack)
	switch {
	case need <= 1<<10:
		var bblock [1 << 10]F
		accPacked(m, n, k, a, lda, 1, b, 1, ldb, c, ldc, bblock[:need], nil)
	case need <= 1<<12:
		var bblock [1 << 12]F
		accPacked(m, n, k, a, lda, 1, b, 1, ldb, c, ldc, bblock[:need], nil)
	default:
		var bblock [kcPack * nbPack]F
		accPacked(m, n, k, a, lda, 1, b, 1, ldb, c, ldc, bblock[:need], nil)
	}
}
