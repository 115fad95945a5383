package gemm

// accPacked adds Σ_p A(i, p)·B(p, j) to c[i·ldc+j] in chain order, where
// A(i, p) = a[i·ars+p·aks] and B(p, j) = b[p·bks+j·bjs], with B packed:
// k panels of kcPack outermost (C keeps its running sums between panels, so
// every chain still runs in increasing p), then blocks of nbPack columns;
// each block of a panel of B is copied into contiguous slivers of the
// kernels' tile width (16 or eight columns in float64, 32 or 16 in
// float32; the last one narrower), which every six-row sliver of A then
// sweeps from L2 while its own kcPack × 6 elements stay in L1. With the
// column blocks outermost, each block would read the whole of A, not just
// a panel, from memory (measured 0–7 % slower; blocking rows of A to keep
// a panel of them in L2 as well gained nothing more, as packing B again
// for every block of rows costs what it saves). With packA, each sliver of A is
// copied first too (Aᵀ: its six elements of one p are contiguous, but the
// p lie a leading dimension apart, often a multiple of 4 kB).
//
// bblock holds the packed panel: at least min(k, kcPack)·min(n, nbPack)
// elements; sliver, with packA, 6·min(k, kcPack). The callers declare them
// on their stacks, no larger than the shape needs, as Go clears them.
func accPacked[F Float](m, n, k int, a []F, ars, aks int, b []F, bks, bjs int, c []F, ldc int, bblock, sliver []F) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	packA := sliver != nil
	L := lanes[F]()
	sw := 2 * L // sliver width: the kernels' tile width
	if zmm {
		sw = 4 * L
	}
	for p0 := 0; p0 < k; p0 += kcPack {
		kb := min(kcPack, k-p0)
		for j0 := 0; j0 < n; j0 += nbPack {
			j1 := min(n, j0+nbPack)
			j8 := j0 + (j1-j0)/sw*sw
			w := j1 - j8 // width of the last, narrow sliver
			packB(bblock[:kb*(j1-j0)], sw, kb, j0, j8, w, b[p0*bks:], bks, bjs)
			for i := 0; i < m; i += 6 {
				mr := min(6, m-i)
				ap, rs, ks := a[i*ars+p0*aks:], ars, aks
				if packA && mr == 6 {
					_, _ = sliver[kb*6-1], ap[(kb-1)*ks+5] // bounds of packRows6's copy
					packRowsF(6, kb, &ap[0], ks, &sliver[0])
					ap, rs, ks = sliver[:kb*6], 1, 6
				}
				if j8 > j0 {
					accTileF(mr, sw, (j8-j0)/sw, kb, &ap[0], rs, ks, &bblock[0], sw, sw*kb, &c[i*ldc+j0], ldc)
				}
				if w == 0 {
					continue
				}
				bw := bblock[(j8-j0)*kb : (j8-j0+w)*kb]
				q := 0
				for _, nr := range [2]int{2 * L, L} {
					if w-q >= nr && nr < sw {
						accTileF(mr, nr, 1, kb, &ap[0], rs, ks, &bw[q], w, 0, &c[i*ldc+j8+q], ldc)
						q += nr
					}
				}
				if q < w {
					accTailF(mr, w-q, kb, &ap[0], rs, ks, &bw[q], w, &c[i*ldc+j8+q], ldc)
				}
			}
		}
	}
}

// packB copies columns j0 … j8+w−1 of kb rows of B (B(p, j) = b[p·bks+j·bjs])
// into d: slivers of sw (two or four YMM widths) columns, element (p, t) of the sliver at
// column j at d[(j−j0)·kb + p·sw + t], then the last w columns likewise
// with rows of w.
func packB[F Float](d []F, sw, kb, j0, j8, w int, b []F, bks, bjs int) {
	for j := j0; j < j8; j += sw {
		s := d[(j-j0)*kb : (j-j0+sw)*kb]
		if bjs == 1 {
			_, _ = s[kb*sw-1], b[(kb-1)*bks+j+sw-1] // bounds of packRows's copy
			packRowsF(sw, kb, &b[j], bks, &s[0])
			continue
		}
		// Bᵀ: column j of B is a contiguous row of b.
		p4 := 0 // columns packed in blocks of L
		if L := lanes[F](); bks == 1 && kb >= L {
			// Bounds: rows j … j+sw−1 of b reach columns L·(kb/L) ≤ kb.
			_ = b[(j+sw-1)*bjs+kb-1]
			p4 = kb &^ (L - 1)
			packNTF(sw, p4/L, &b[j*bjs], bjs, &s[0])
		}
		for t := range sw {
			col := b[(j+t)*bjs : (j+t)*bjs+(kb-1)*bks+1]
			for p := p4; p < kb; p++ {
				s[p*sw+t] = col[p*bks]
			}
		}
	}
	s := d[(j8-j0)*kb : (j8-j0+w)*kb]
	if bjs == 1 && w >= 8 {
		// Rows of B: a copy a row beats w strided loads and stores.
		for p := range kb {
			copy(s[p*w:(p+1)*w], b[p*bks+j8:p*bks+j8+w])
		}
		return
	}
	for t := range w {
		for p := range kb {
			s[p*w+t] = b[p*bks+(j8+t)*bjs]
		}
	}
}
