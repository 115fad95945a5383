package gemm

import "math"

// The pure-Go kernels: register-blocked loops that keep each output's order
// of the package doc, so they give the AVX2 kernels' bits on any machine.
// They run when AVX2 is absent or turned off (HGPSIM_NOAVX2=1).
//
// The blocked loops are float64's, written with math.FMA, which the
// compiler turns into the machine's fused multiply-add where it has one
// (amd64 with FMA, arm64). A generic loop would call vec.FMA, which is too
// large to inline, and ran 5–6 times slower. float32 runs the reference
// loops: its fused multiply-add has no instruction in Go and is emulated
// (vec.FMA32) anyway.

func dotNTGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	run(dotNTGo64, dotNTRef[float32], m, n, k, a, lda, b, ldb, c, ldc)
}

func accNNGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	run(accNNGo64, accNNRef[float32], m, n, k, a, lda, b, ldb, c, ldc)
}

func accTNGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	run(accTNGo64, accTNRef[float32], m, n, k, a, lda, b, ldb, c, ldc)
}

func accNTGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	run(accNTGo64, accNTRef[float32], m, n, k, a, lda, b, ldb, c, ldc)
}

// dotNTGo64 computes DotNT one output at a time with dotRef's loop: register
// blocks of two or four outputs (eight or sixteen partial sums) measured
// slower, as the Go compiler spills their sums to the stack.
func dotNTGo64(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if k == 0 {
		// A and B are empty and their slices may be too.
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	for i := range m {
		ai := a[i*lda : i*lda+k]
		ci := c[i*ldc : i*ldc+n]
		for j := range ci {
			ci[j] = dot64(ai, b[j*ldb:j*ldb+k])
		}
	}
}

// accGo64 adds Σ_p A(i, p)·B(p, j) to c[i·ldc+j] in chain order, where
// A(i, p) = a[i·ars+p·aks] and B(p, j) = b[p·bks+j·bjs]. Two rows by four
// columns of C stay in registers over the whole of k, eight chains at once
// where the reference loop of AccNT runs one. AccNN and AccTN, whose B has
// contiguous rows, have the faster accRowsGo64.
func accGo64(m, n, k int, a []float64, ars, aks int, b []float64, bks, bjs int, c []float64, ldc int) {
	if k == 0 {
		return
	}
	i := 0
	for ; i+2 <= m; i += 2 {
		c0 := c[i*ldc : i*ldc+n]
		c1 := c[(i+1)*ldc : (i+1)*ldc+n]
		j := 0
		for ; j+4 <= n; j += 4 {
			c00, c01, c02, c03 := c0[j], c0[j+1], c0[j+2], c0[j+3]
			c10, c11, c12, c13 := c1[j], c1[j+1], c1[j+2], c1[j+3]
			for p := range k {
				x0, x1 := a[i*ars+p*aks], a[(i+1)*ars+p*aks]
				o := p*bks + j*bjs
				y0, y1, y2, y3 := b[o], b[o+bjs], b[o+2*bjs], b[o+3*bjs]
				c00 = math.FMA(x0, y0, c00)
				c01 = math.FMA(x0, y1, c01)
				c02 = math.FMA(x0, y2, c02)
				c03 = math.FMA(x0, y3, c03)
				c10 = math.FMA(x1, y0, c10)
				c11 = math.FMA(x1, y1, c11)
				c12 = math.FMA(x1, y2, c12)
				c13 = math.FMA(x1, y3, c13)
			}
			c0[j], c0[j+1], c0[j+2], c0[j+3] = c00, c01, c02, c03
			c1[j], c1[j+1], c1[j+2], c1[j+3] = c10, c11, c12, c13
		}
		for ; j < n; j++ {
			c0[j] = chain(c0[j], k, a[i*ars:], aks, b[j*bjs:], bks)
			c1[j] = chain(c1[j], k, a[(i+1)*ars:], aks, b[j*bjs:], bks)
		}
	}
	if i < m {
		ci := c[i*ldc : i*ldc+n]
		for j := range ci {
			ci[j] = chain(ci[j], k, a[i*ars:], aks, b[j*bjs:], bks)
		}
	}
}

// chain returns s + x[0]·y[0] + x[xs]·y[ys] + … over k terms, added in
// order, each by a fused multiply-add.
func chain(s float64, k int, x []float64, xs int, y []float64, ys int) float64 {
	for p := range k {
		s = math.FMA(x[p*xs], y[p*ys], s)
	}
	return s
}

// accRowsGo64 adds Σ_p A(i, p)·b[p·ldb+j] to c[i·ldc+j] in chain order,
// A(i, p) = a[i·ars+p·aks], for B with contiguous rows: each row of B is
// loaded once for four rows of C, whose elements each take one product
// per p — the reference loop's order, with a quarter of its loads of B.
func accRowsGo64(m, n, k int, a []float64, ars, aks int, b []float64, ldb int, c []float64, ldc int) {
	i := 0
	for ; i+4 <= m; i += 4 {
		c0 := c[i*ldc : i*ldc+n]
		c1 := c[(i+1)*ldc : (i+1)*ldc+n]
		c2 := c[(i+2)*ldc : (i+2)*ldc+n]
		c3 := c[(i+3)*ldc : (i+3)*ldc+n]
		for p := range k {
			o := i*ars + p*aks
			x0, x1, x2, x3 := a[o], a[o+ars], a[o+2*ars], a[o+3*ars]
			bp := b[p*ldb : p*ldb+n]
			c0, c1, c2, c3 := c0[:len(bp)], c1[:len(bp)], c2[:len(bp)], c3[:len(bp)]
			for j, y := range bp {
				c0[j] = math.FMA(x0, y, c0[j])
				c1[j] = math.FMA(x1, y, c1[j])
				c2[j] = math.FMA(x2, y, c2[j])
				c3[j] = math.FMA(x3, y, c3[j])
			}
		}
	}
	for ; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		for p := range k {
			x := a[i*ars+p*aks]
			bp := b[p*ldb : p*ldb+n]
			ci := ci[:len(bp)]
			for j, y := range bp {
				ci[j] = math.FMA(x, y, ci[j])
			}
		}
	}
}

func accNNGo64(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accRowsGo64(m, n, k, a, lda, 1, b, ldb, c, ldc)
}

func accTNGo64(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accRowsGo64(m, n, k, a, 1, lda, b, ldb, c, ldc)
}

func accNTGo64(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accGo64(m, n, k, a, lda, 1, b, 1, ldb, c, ldc)
}

// dot64 is dotRef for float64 with math.FMA.
func dot64(a, b []float64) float64 {
	var s0, s1, s2, s3 float64
	n := len(a)
	b = b[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 = math.FMA(a[i], b[i], s0)
		s1 = math.FMA(a[i+1], b[i+1], s1)
		s2 = math.FMA(a[i+2], b[i+2], s2)
		s3 = math.FMA(a[i+3], b[i+3], s3)
	}
	for ; i < n; i++ {
		s0 = math.FMA(a[i], b[i], s0)
	}
	return (s0 + s2) + (s1 + s3)
}
