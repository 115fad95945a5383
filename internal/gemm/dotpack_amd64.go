package gemm

import "unsafe"

// DotNT on packed k chunks. When a leading dimension is a multiple of
// 4 kB, the rows a tile streams (4 of A, 8 of B) share one set of the L1
// cache, which holds twelve lines a set: they evict one another and the
// kernels run at a third of their speed (float64 fedem-cnn's dense layer,
// 128 × 2048 × 1024: 20–24 GFLOP/s against 73 with padded rows; float32
// 70 against 130). dotNTPacked copies blocks of A's and B's rows, a chunk
// of k at a time, into stack arrays whose rows are one cache line longer
// than the chunk, and carries each output's partial sums from chunk to
// chunk (the kernels' s and flags): every output takes its products in
// the same lanes and order as over the whole of k, so the bits are
// dotRef's.

const (
	// dotKCBytes is a chunk of one row; a tile's 4 + 8 rows of it
	// (12 kB) stay in L1 across the tiles of a row.
	dotKCBytes = 1 << 10
	// dotPadBytes lengthens each packed row by a cache line, so that the
	// rows of a tile fall into different sets.
	dotPadBytes = 64
	// dotBlockRows rows of A and of B are packed at a time (34 kB each).
	dotBlockRows = 32
	// dotSumBytes holds the carried partial sums of a block: 32 × 32
	// outputs in float64 (4 sums each), 32 × 16 in float32 (16 each).
	dotSumBytes  = 32 << 10
	dotPackBytes = dotBlockRows * (dotKCBytes + dotPadBytes)
)

// packDot reports whether DotNT packs its operands: when a leading
// dimension is a multiple of 4 kB and a row is longer than a chunk.
func packDot[F Float](k, lda, ldb int) bool {
	size := int(unsafe.Sizeof(F(0)))
	return k*size > dotKCBytes && (lda*size%4096 == 0 || ldb*size%4096 == 0)
}

// dotLanes is the number of partial sums of an output in dot order.
func dotLanes[F Float]() int {
	if unsafe.Sizeof(F(0)) == 4 {
		return 16
	}
	return 4
}

// dotNTPacked computes DotNT in blocks of up to dotBlockRows rows of A
// by dotBlockRows (or fewer, to fit the sums) of B: for each block, chunk
// by chunk of k, both blocks' rows are copied into padded stack rows and
// every tile runs on them, its sums carried in from the previous chunk
// and out to the next; the last chunk adds dot order's remainder and
// finishes the outputs. Chunks are whole blocks of four (sixteen in
// float32) elements, so every partial sum s_l takes exactly the elements
// k ≡ l it takes over the whole row, in the same order.
func dotNTPacked[F Float](t dotTiles, m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	var abuf, bbuf [dotPackBytes / 8]uint64
	var sbuf [dotSumBytes / 8]uint64
	size := int(unsafe.Sizeof(F(0)))
	ap := unsafe.Slice((*F)(unsafe.Pointer(&abuf[0])), dotPackBytes/size)
	bp := unsafe.Slice((*F)(unsafe.Pointer(&bbuf[0])), dotPackBytes/size)
	sums := unsafe.Slice((*F)(unsafe.Pointer(&sbuf[0])), dotSumBytes/size)
	kc, kp := dotKCBytes/size, (dotKCBytes+dotPadBytes)/size
	W := dotLanes[F]()
	mc := dotBlockRows / t.tm * t.tm
	nc := min(dotBlockRows, len(sums)/W/mc) / t.tn * t.tn
	for i0 := 0; i0 < m; i0 += mc {
		i1 := min(m, i0+mc)
		for j0 := 0; j0 < n; j0 += nc {
			j1 := min(n, j0+nc)
			w := j1 - j0
			for p0 := 0; p0 < k; p0 += kc {
				kb := min(kc, k-p0)
				flags := 0
				if p0 > 0 {
					flags |= 1
				}
				if p0+kb < k {
					flags |= 2
				}
				for i := i0; i < i1; i++ {
					copy(ap[(i-i0)*kp:(i-i0)*kp+kb], a[i*lda+p0:i*lda+p0+kb])
				}
				for j := j0; j < j1; j++ {
					copy(bp[(j-j0)*kp:(j-j0)*kp+kb], b[j*ldb+p0:j*ldb+p0+kb])
				}
				for i := i0; i < i1; i += t.tm {
					mr := min(t.tm, i1-i)
					dotRow(t, mr, w, kb, &ap[(i-i0)*kp], kp, bp, kp, c[i*ldc+j0:], ldc, sums[(i-i0)*w*W:], flags)
				}
			}
		}
	}
}
