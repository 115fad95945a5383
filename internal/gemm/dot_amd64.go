package gemm

import "unsafe"

// dotNTAVX2 runs 3 × 3 tiles of YMM registers, one output a register; in
// float32 2 × 3 tiles, an output's sixteen partial sums in two registers.
func dotNTAVX2[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	dotNTRun(dotNTAVX2Tiles[F](), packDot[F](k, lda, ldb), m, n, k, a, lda, b, ldb, c, ldc)
}

func dotNTAVX2Tiles[F Float]() dotTiles {
	if lanes[F]() == 8 {
		return dotTiles{2, 3, 1, tilesYMM}
	}
	return dotTiles{3, 3, 1, tilesYMM}
}

// dotNTAVX512 runs 4 × 4 tiles of YMM registers or, with zmm, 4 × 8 tiles
// of two outputs a ZMM register (dotTileZ). In float32 it runs 4 × 4
// tiles of one output a ZMM register with zmm, 4 × 3 tiles of two YMM
// registers an output without.
func dotNTAVX512[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	dotNTRun(dotNTAVX512Tiles[F](), packDot[F](k, lda, ldb), m, n, k, a, lda, b, ldb, c, ldc)
}

func dotNTAVX512Tiles[F Float]() dotTiles {
	switch {
	case zmm && lanes[F]() == 8:
		return dotTiles{4, 4, 1, tilesZMM}
	case zmm:
		return dotTiles{4, 8, 2, tilesZMM}
	case lanes[F]() == 8:
		return dotTiles{4, 3, 1, tilesX32}
	default:
		return dotTiles{4, 4, 1, tilesYMM}
	}
}

// dotNTRun runs DotNT on operands in place or, with pack, on packed k
// chunks (dotNTPacked).
func dotNTRun[F Float](t dotTiles, pack bool, m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if pack && k > 0 { // k = 0 only clears C
		dotNTPacked(t, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	dotNTTiled(t, m, n, k, a, lda, b, ldb, c, ldc)
}

// dotTiles is a driver's register tile, tm × tn outputs; a tile that
// holds outputs in pairs (pairs = 2) takes an even width.
type dotTiles struct {
	tm, tn, pairs int
	kernels       tileKernels
}

// tileKernels names a family of tile kernels. The drivers call them
// through run's switch, not through function values: escape analysis
// cannot follow an indirect call and would move dotNTPacked's stack
// arrays to the heap.
type tileKernels int

const (
	tilesYMM tileKernels = iota // dotTile, or sdotTile in float32
	tilesZMM                    // dotTileZ, or sdotTileZ
	tilesX32                    // sdotTileX (float32 only)
)

// runTile runs family t's mr × nr kernel on nj tiles side by side,
// carrying partial sums through s as flags say (kernels_amd64.go).
func runTile[F Float](t tileKernels, mr, nr, nj, k int, a *F, lda int, b *F, ldb int, c *F, ldc int, s *F, flags int) {
	if lanes[F]() == 8 {
		a, b, c, s := as[float32](a), as[float32](b), as[float32](c), as[float32](s)
		switch t {
		case tilesZMM:
			sdotTileZ(mr, nr, nj, k, a, lda, b, ldb, c, ldc, s, flags)
		case tilesX32:
			sdotTileX(mr, nr, nj, k, a, lda, b, ldb, c, ldc, s, flags)
		default:
			sdotTile(mr, nr, nj, k, a, lda, b, ldb, c, ldc, s, flags)
		}
		return
	}
	a64, b64, c64, s64 := as[float64](a), as[float64](b), as[float64](c), as[float64](s)
	if t == tilesZMM {
		dotTileZ(mr, nr, nj, k, a64, lda, b64, ldb, c64, ldc, s64, flags)
		return
	}
	dotTile(mr, nr, nj, k, a64, lda, b64, ldb, c64, ldc, s64, flags)
}

// dotTileZ runs the mr × nr kernel of two outputs a register (nr even).
func dotTileZ(mr, nr, nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, s *float64, flags int) {
	switch mr*16 + nr {
	case 1*16 + 2:
		dotKernZ1x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 1*16 + 4:
		dotKernZ1x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 1*16 + 6:
		dotKernZ1x6(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 1*16 + 8:
		dotKernZ1x8(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*16 + 2:
		dotKernZ2x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*16 + 4:
		dotKernZ2x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*16 + 6:
		dotKernZ2x6(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*16 + 8:
		dotKernZ2x8(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*16 + 2:
		dotKernZ3x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*16 + 4:
		dotKernZ3x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*16 + 6:
		dotKernZ3x6(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*16 + 8:
		dotKernZ3x8(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*16 + 2:
		dotKernZ4x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*16 + 4:
		dotKernZ4x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*16 + 6:
		dotKernZ4x6(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*16 + 8:
		dotKernZ4x8(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	default:
		panic("gemm: no 512-bit dot kernel for this tile")
	}
}

// dotNTTiled computes DotNT in t's tiles, a row of tiles per kernel call
// (3 × 3 with AVX2's sixteen registers, 4 × 4 with AVX-512VL's 32, 4 × 8
// on ZMM registers), and the last tn − 1 columns or fewer in one narrower
// tile; a column left over by a tile of pairs runs dot's one-column
// kernel. Each output is summed over the whole of k in one call, exactly
// as dotRef does.
func dotNTTiled[F Float](t dotTiles, m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	tm, tn := t.tm, t.tn
	nc := max(tn, dotL2/int(unsafe.Sizeof(F(0)))/k/tn*tn)
	for j0 := 0; j0 < n; j0 += nc {
		j1 := min(n, j0+nc)
		for i := 0; i < m; i += tm {
			dotRow(t, min(tm, m-i), j1-j0, k, &a[i*lda], lda, b[j0*ldb:], ldb, c[i*ldc+j0:], ldc, nil, 0)
		}
	}
}

// dotRow runs the tiles of mr rows of A against w rows of B (the first
// of b), a row of outputs of C, with the carried sums of the row's tiles
// one after another from s.
func dotRow[F Float](t dotTiles, mr, w, k int, a *F, lda int, b []F, ldb int, c []F, ldc int, s []F, flags int) {
	tn, pairs := t.tn, t.pairs
	nj, rest := w/tn, w%tn
	sums := mr * tn * dotLanes[F]() // one tile's carried sums
	var sp *F
	if s != nil {
		sp = &s[0]
	}
	if nj > 0 {
		runTile(t.kernels, mr, tn, nj, k, a, lda, &b[0], ldb, &c[0], ldc, sp, flags)
		if s != nil {
			s = s[nj*sums:]
		}
	}
	j := nj * tn
	if v := rest &^ (pairs - 1); v > 0 {
		if s != nil {
			sp = &s[0]
		}
		runTile(t.kernels, mr, v, 1, k, a, lda, &b[j*ldb], ldb, &c[j], ldc, sp, flags)
		if s != nil {
			s = s[mr*v*dotLanes[F]():]
		}
		j += v
	}
	if j < w {
		if s != nil {
			sp = &s[0]
		}
		runTile(tilesYMM, mr, 1, 1, k, a, lda, &b[j*ldb], ldb, &c[j], ldc, sp, flags)
	}
}

// dotTile runs the mr × nr kernel; tiles with a side of 4 need AVX-512VL.
func dotTile(mr, nr, nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int, s *float64, flags int) {
	switch mr*5 + nr {
	case 1*5 + 1:
		dotKern1x1(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 1*5 + 2:
		dotKern1x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 1*5 + 3:
		dotKern1x3(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 1*5 + 4:
		dotKernX1x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*5 + 1:
		dotKern2x1(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*5 + 2:
		dotKern2x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*5 + 3:
		dotKern2x3(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 2*5 + 4:
		dotKernX2x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*5 + 1:
		dotKern3x1(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*5 + 2:
		dotKern3x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*5 + 3:
		dotKern3x3(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 3*5 + 4:
		dotKernX3x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*5 + 1:
		dotKernX4x1(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*5 + 2:
		dotKernX4x2(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*5 + 3:
		dotKernX4x3(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	case 4*5 + 4:
		dotKernX4x4(nj, k, a, lda, b, ldb, c, ldc, s, flags)
	default:
		panic("gemm: no dot kernel for this tile")
	}
}
