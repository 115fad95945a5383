package gemm

import "unsafe"

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

// lanes is the number of F elements in a YMM register: the width of the
// narrowest chain-order tile.
func lanes[F Float]() int { return 32 / int(unsafe.Sizeof(F(0))) }

// as views p as a pointer to T, which has F's size (F is T).
func as[T, F Float](p *F) *T { return (*T)(unsafe.Pointer(p)) }

// accTileF runs accTile or, in float32, saccTile (nr = 32, 16 or 8).
func accTileF[F Float](mr, nr, nj, kc int, a *F, rs, ks int, b *F, ldb, bstep int, c *F, ldc int) {
	if lanes[F]() == 8 {
		saccTile(mr, nr, nj, kc, as[float32](a), rs, ks, as[float32](b), ldb, bstep, as[float32](c), ldc)
		return
	}
	accTile(mr, nr, nj, kc, as[float64](a), rs, ks, as[float64](b), ldb, bstep, as[float64](c), ldc)
}

// accTailF runs accTail or, in float32, saccTail (1 ≤ w ≤ 7).
func accTailF[F Float](mr, w, kc int, a *F, rs, ks int, b *F, ldb int, c *F, ldc int) {
	if lanes[F]() == 8 {
		saccTail(mr, w, kc, as[float32](a), rs, ks, as[float32](b), ldb, as[float32](c), ldc)
		return
	}
	accTail(mr, w, kc, as[float64](a), rs, ks, as[float64](b), ldb, as[float64](c), ldc)
}

// stailMasks[w] selects the first w lanes of a vector for VMASKMOVPS.
var stailMasks = [8][8]int32{{}, {-1}, {-1, -1}, {-1, -1, -1}, {-1, -1, -1, -1},
	{-1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1, -1, -1}}

// packRowsF copies the first w elements (w = 6, 2·lanes or 4·lanes) of n
// rows one leading dimension lds apart into consecutive rows of w.
func packRowsF[F Float](w, n int, src *F, lds int, dst *F) {
	if lanes[F]() == 8 {
		s, d := as[float32](src), as[float32](dst)
		switch w {
		case 6:
			spackRows6(n, s, lds, d)
		case 16:
			spackRows16(n, s, lds, d)
		default:
			spackRows32(n, s, lds, d)
		}
		return
	}
	s, d := as[float64](src), as[float64](dst)
	switch w {
	case 6:
		packRows6(n, s, lds, d)
	case 8:
		packRows8(n, s, lds, d)
	default:
		packRows16(n, s, lds, d)
	}
}

// packBlockF runs packBlock48 or, in float32, spackBlock48: rows 0–47 of a
// k panel of Aᵀ (A(i, p) = src[i + p·lds]) into eight six-row slivers.
func packBlockF[F Float](kb int, src *F, lds int, dst *F) {
	if lanes[F]() == 8 {
		spackBlock48(kb, as[float32](src), lds, as[float32](dst))
		return
	}
	packBlock48(kb, as[float64](src), lds, as[float64](dst))
}

// packNTF packs w rows (2·lanes or 4·lanes) of Bᵀ into a sliver, columns
// 0 … lanes·nb−1 (packNT8/16 in blocks of four, spackNT16/32 of eight).
func packNTF[F Float](w, nb int, b *F, ldb int, d *F) {
	switch {
	case lanes[F]() == 8 && w == 16:
		spackNT16(nb, as[float32](b), ldb, as[float32](d))
	case lanes[F]() == 8:
		spackNT32(nb, as[float32](b), ldb, as[float32](d))
	case w == 8:
		packNT8(nb, as[float64](b), ldb, as[float64](d))
	default:
		packNT16(nb, as[float64](b), ldb, as[float64](d))
	}
}
