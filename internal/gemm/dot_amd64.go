package gemm

import "unsafe"

// dotNTAVX2 runs 3 × 3 tiles of YMM registers, one output a register; in
// float32 2 × 3 tiles, an output's sixteen partial sums in two registers.
func dotNTAVX2[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if lanes[F]() == 8 {
		dotNTTiled(2, 3, 1, dotTileF[F], m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	dotNTTiled(3, 3, 1, dotTileF[F], m, n, k, a, lda, b, ldb, c, ldc)
}

// dotNTAVX512 runs 4 × 4 tiles of YMM registers or, with zmm, 4 × 8 tiles
// of two outputs a ZMM register (dotTileZ). In float32 it runs 4 × 4
// tiles of one output a ZMM register with zmm, 4 × 3 tiles of two YMM
// registers an output without.
func dotNTAVX512[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	switch {
	case zmm && lanes[F]() == 8:
		dotNTTiled(6, 4, 1, dotTileZF[F], m, n, k, a, lda, b, ldb, c, ldc)
	case zmm:
		dotNTTiled(4, 8, 2, dotTileZF[F], m, n, k, a, lda, b, ldb, c, ldc)
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
				dotTileF(mr, 1, 1, k, &a[i*lda], lda, &b[j*ldb], ldb, &c[i*ldc+j], ldc)
			}
		}
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
