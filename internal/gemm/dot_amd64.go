package gemm

import (
	"sync"
	"unsafe"
)

// dotNTAVX2 runs 3 × 3 tiles of YMM registers, one output a register; in
// float32 2 × 3 tiles, an output's sixteen partial sums in two registers.
func dotNTAVX2[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if lanes[F]() == 8 {
		dotNTTiled(2, 3, 1, dotTileF[F], m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	dotNTTiled(3, 3, 1, dotTileF[F], m, n, k, a, lda, b, ldb, c, ldc)
}

// dotNTAVX512 runs 4 × 4 tiles of YMM registers or, with zmm, 6 × 8 tiles
// of two outputs a ZMM register (dotTileZ; B's pairs of rows packed from
// pairRows rows of A on). In float32 it runs 6 × 4
// tiles of one output a ZMM register with zmm (24 of the 32 registers
// hold sums; against 4 × 4 on Zen 5, both with the per-output finish:
// DotNT 1024 × 64 × 800 209 → 221 GFLOP/s, 128 × 512 × 4096 131 → 163),
// 4 × 3 tiles of two YMM registers an output without.
func dotNTAVX512[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	switch {
	case zmm && lanes[F]() == 8:
		dotNTTiled(6, 4, 1, dotTileZF[F], m, n, k, a, lda, b, ldb, c, ldc)
	case zmm:
		dotNTTiled(6, 8, 2, dotTileZF[F], m, n, k, a, lda, b, ldb, c, ldc)
	case lanes[F]() == 8:
		dotNTTiled(4, 3, 1, sdotTileXF[F], m, n, k, a, lda, b, ldb, c, ldc)
	default:
		dotNTTiled(4, 4, 1, dotTileF[F], m, n, k, a, lda, b, ldb, c, ldc)
	}
}

// dotTileF runs dotTile's mr × nr kernel in F.
func dotTileF[F Float](mr, nr, nj, k int, a *F, lda int, b *F, ldb int, c *F, ldc int) {
	if lanes[F]() == 8 {
		sdotTile(mr, nr, nj, k, as[float32](a), lda, as[float32](b), ldb, as[float32](c), ldc)
		return
	}
	dotTile(mr, nr, nj, k, as[float64](a), lda, as[float64](b), ldb, as[float64](c), ldc)
}

// sdotTileXF runs sdotTileX's mr × nr kernel; F must be float32.
func sdotTileXF[F Float](mr, nr, nj, k int, a *F, lda int, b *F, ldb int, c *F, ldc int) {
	sdotTileX(mr, nr, nj, k, as[float32](a), lda, as[float32](b), ldb, as[float32](c), ldc)
}

// dotTileZF runs dotTileZ's mr × nr kernel (nr even) or, in float32,
// sdotTileZ's.
func dotTileZF[F Float](mr, nr, nj, k int, a *F, lda int, b *F, ldb int, c *F, ldc int) {
	if lanes[F]() == 8 {
		sdotTileZ(mr, nr, nj, k, as[float32](a), lda, as[float32](b), ldb, as[float32](c), ldc)
		return
	}
	dotTileZ(mr, nr, nj, k, as[float64](a), lda, as[float64](b), ldb, as[float64](c), ldc)
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
	case 5*16 + 2:
		dotKernZ5x2(nj, k, a, lda, b, ldb, c, ldc)
	case 5*16 + 4:
		dotKernZ5x4(nj, k, a, lda, b, ldb, c, ldc)
	case 5*16 + 6:
		dotKernZ5x6(nj, k, a, lda, b, ldb, c, ldc)
	case 5*16 + 8:
		dotKernZ5x8(nj, k, a, lda, b, ldb, c, ldc)
	case 6*16 + 2:
		dotKernZ6x2(nj, k, a, lda, b, ldb, c, ldc)
	case 6*16 + 4:
		dotKernZ6x4(nj, k, a, lda, b, ldb, c, ldc)
	case 6*16 + 6:
		dotKernZ6x6(nj, k, a, lda, b, ldb, c, ldc)
	case 6*16 + 8:
		dotKernZ6x8(nj, k, a, lda, b, ldb, c, ldc)
	default:
		panic("gemm: no 512-bit dot kernel for this tile")
	}
}

// dotNTTiled computes DotNT in tm × tn tiles, a row of tiles per kernel
// call of tile (3 × 3 with AVX2's sixteen registers, 4 × 4 with
// AVX-512VL's 32, 6 × 8 or, in float32, 6 × 4 on ZMM registers), and the
// last tn − 1 columns or fewer in one narrower tile; a tile that holds outputs in pairs (pairs =
// 2) takes an even width, and a column left over runs dot's one-column
// kernel. The kernels sum each output exactly as dotRef does.
//
// On ZMM registers in float64 (pairs = 2, tn = 8) with at least
// pairRows rows, each block's whole tiles read B from pairs of rows packed
// once for the block (packPairs8, dotKernZP), where the rows in place cost
// every tile row a lane shuffle per pair and step.
func dotNTTiled[F Float](tm, tn, pairs int, tile dotTiler[F], m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	nc := max(tn, dotL2/int(unsafe.Sizeof(F(0)))/k/tn*tn)
	var pk *pairBlock
	if zmm && pairs == 2 && m >= pairRows && k >= 4 && nc*k <= len(pk) {
		pk = pairBlocks.Get().(*pairBlock)
		defer pairBlocks.Put(pk)
	}
	for j0 := 0; j0 < n; j0 += nc {
		j1 := min(n, j0+nc)
		nj, rest := (j1-j0)/tn, (j1-j0)%tn
		if pk != nil {
			for t := range nj {
				_ = b[(j0+8*t+7)*ldb+k-1] // bounds of packPairs8's reads
				packPairs8(k/4, as[float64](&b[(j0+8*t)*ldb]), ldb, &pk[t*8*(k/4)*4])
			}
		}
		for i := 0; i < m; i += tm {
			mr := min(tm, m-i)
			switch {
			case nj > 0 && pk != nil:
				dotTileZP(mr, nj, k, as[float64](&a[i*lda]), lda, as[float64](&b[j0*ldb]), ldb, as[float64](&c[i*ldc+j0]), ldc, &pk[0])
			case nj > 0:
				tile(mr, tn, nj, k, &a[i*lda], lda, &b[j0*ldb], ldb, &c[i*ldc+j0], ldc)
			}
			j := j0 + nj*tn
			if w := rest &^ (pairs - 1); w > 0 {
				tile(mr, w, 1, k, &a[i*lda], lda, &b[j*ldb], ldb, &c[i*ldc+j], ldc)
				j += w
			}
			// The one-column kernels take up to four rows.
			for r := 0; j < j1 && r < mr; r += 4 {
				dotTileF(min(4, mr-r), 1, 1, k, &a[(i+r)*lda], lda, &b[j*ldb], ldb, &c[(i+r)*ldc+j], ldc)
			}
		}
	}
}

// pairRows is the fewest rows of A for which dotNTTiled packs B's pairs
// of rows, which reads and writes B once more. Zen 5, GFLOP/s unpacked
// against packed, × 64 × 784: 24 rows 91 / 87, 36 rows 90 / 92, 48 rows
// 90 / 96, 96 rows 89 / 98, 128 rows 84 / 97; 128 × 2048 × 1024 76 / 93.
const pairRows = 48

// pairBlock holds a block of B packed by packPairs8: dotL2 bytes, the
// block dotNTTiled keeps in L2. The blocks are pooled rather than declared
// on the stack, where Go would clear 384 kB on every call; a pool drops
// its blocks over two garbage collections, after which a call allocates
// one again (the contents are always written before they are read).
type pairBlock [dotL2 / 8]float64

var pairBlocks = sync.Pool{New: func() any { return new(pairBlock) }}

// dotTileZP runs the mr × 8 kernel of two outputs a register on nj tiles
// of B packed by packPairs8 at bp.
func dotTileZP(mr, nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, bp *float64) {
	switch mr {
	case 1:
		dotKernZP1x8(nj, k, a, lda, b, ldb, c, ldc, bp)
	case 2:
		dotKernZP2x8(nj, k, a, lda, b, ldb, c, ldc, bp)
	case 3:
		dotKernZP3x8(nj, k, a, lda, b, ldb, c, ldc, bp)
	case 4:
		dotKernZP4x8(nj, k, a, lda, b, ldb, c, ldc, bp)
	case 5:
		dotKernZP5x8(nj, k, a, lda, b, ldb, c, ldc, bp)
	case 6:
		dotKernZP6x8(nj, k, a, lda, b, ldb, c, ldc, bp)
	default:
		panic("gemm: no packed 512-bit dot kernel for this tile")
	}
}

// dotTiler runs an mr × nr tile kernel on nj tiles side by side.
type dotTiler[F Float] func(mr, nr, nj, k int, a *F, lda int, b *F, ldb int, c *F, ldc int)

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
