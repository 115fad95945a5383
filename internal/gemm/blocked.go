package gemm

// The pure-Go kernels: register-blocked loops that keep each output's order
// of the package doc, so they give the AVX2 kernels' bits on any machine.
// They run when AVX2 is absent or turned off (HGPSIM_NOAVX2=1).

// dotNTGo computes DotNT two outputs at a time (one row of a against two
// rows of b): eight partial sums stay in registers and each element of a
// row of a is loaded once for both.
func dotNTGo(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	k4 := k &^ 3
	for i := range m {
		ai := a[i*lda : i*lda+k]
		ci := c[i*ldc : i*ldc+n]
		j := 0
		for ; j+2 <= n; j += 2 {
			b0 := b[j*ldb : j*ldb+k]
			b1 := b[(j+1)*ldb : (j+1)*ldb+k]
			var s00, s01, s02, s03, s10, s11, s12, s13 float64
			for q := 0; q < k4; q += 4 {
				x := ai[q : q+4 : q+4]
				y0 := b0[q : q+4 : q+4]
				y1 := b1[q : q+4 : q+4]
				s00 += float64(x[0] * y0[0])
				s01 += float64(x[1] * y0[1])
				s02 += float64(x[2] * y0[2])
				s03 += float64(x[3] * y0[3])
				s10 += float64(x[0] * y1[0])
				s11 += float64(x[1] * y1[1])
				s12 += float64(x[2] * y1[2])
				s13 += float64(x[3] * y1[3])
			}
			for q := k4; q < k; q++ {
				s00 += float64(ai[q] * b0[q])
				s10 += float64(ai[q] * b1[q])
			}
			ci[j] = (s00 + s02) + (s01 + s03)
			ci[j+1] = (s10 + s12) + (s11 + s13)
		}
		if j < n {
			ci[j] = dotRef(ai, b[j*ldb:j*ldb+k])
		}
	}
}

// accGo adds Σ_p A(i, p)·B(p, j) to c[i·ldc+j] in chain order, where
// A(i, p) = a[i·ars+p·aks] and B(p, j) = b[p·bks+j·bjs]: the strides make
// one loop serve AccNN, AccTN and AccNT. Two rows by four columns of C stay
// in registers over the whole of k.
func accGo(m, n, k int, a []float64, ars, aks int, b []float64, bks, bjs int, c []float64, ldc int) {
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
				c00 += float64(x0 * y0)
				c01 += float64(x0 * y1)
				c02 += float64(x0 * y2)
				c03 += float64(x0 * y3)
				c10 += float64(x1 * y0)
				c11 += float64(x1 * y1)
				c12 += float64(x1 * y2)
				c13 += float64(x1 * y3)
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
// order, each product rounded first.
func chain(s float64, k int, x []float64, xs int, y []float64, ys int) float64 {
	for p := range k {
		s += float64(x[p*xs] * y[p*ys])
	}
	return s
}

func accNNGo(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accGo(m, n, k, a, lda, 1, b, ldb, 1, c, ldc)
}

func accTNGo(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accGo(m, n, k, a, 1, lda, b, ldb, 1, c, ldc)
}

func accNTGo(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	accGo(m, n, k, a, lda, 1, b, 1, ldb, c, ldc)
}
