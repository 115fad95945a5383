package gemm

import (
	"math"
	"unsafe"

	"hgpsim/internal/vec"
)

// The pure-Go kernels: register-blocked loops that keep each output's order
// of the package doc, so they give the AVX2 kernels' bits on any machine.
// They run when AVX2 and FMA are absent or turned off (HGPSIM_NOAVX2=1).
//
// Their products go through fmaQuick, which the compiler inlines (vec.FMA
// is too large to: the loops that called it ran 5–6 times slower). In
// float64 it is math.FMA, the machine's fused multiply-add where there is
// one (amd64 with FMA, arm64). float32 has no fused multiply-add in Go:
// fmaQuick rounds the float64 sum, exact but for one rounding, and reports
// the rare sums where that is not the float32 result (vec.FMA32), for
// which the loops take vec.FMA; in float64 the report is a constant and
// those branches compile away.

// fmaQuick returns x·y + s rounded once to F, and true; or, in float32,
// x·y + s rounded to float64 and then to float32 and false, when the
// float64 sum lies on a float32 tie or in float32's subnormal range,
// where rounding twice can differ from rounding once.
func fmaQuick[F Float](x, y, s F) (F, bool) {
	if unsafe.Sizeof(x) == 8 {
		return F(math.FMA(float64(x), float64(y), float64(s))), true
	}
	r := float64(x)*float64(y) + float64(s) // the product is exact in float64
	u := math.Float64bits(r)
	return F(r), u&(1<<29-1) != 1<<28 && u&(0x7ff<<52) >= (1023-126)<<52
}

// dotNTGo computes DotNT one output at a time with dotGo: register blocks
// of two or four outputs (eight or sixteen partial sums) measured slower,
// as the Go compiler spills their sums to the stack.
func dotNTGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
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
			ci[j] = dotGo(ai, b[j*ldb:j*ldb+k])
		}
	}
}

// dotGo is dotRef with fmaQuick.
func dotGo[F Float](a, b []F) F {
	n := len(a)
	b = b[:n]
	if !vec.Is64[F]() {
		return dot16Go(a, b)
	}
	var s0, s1, s2, s3 F
	i := 0
	for ; i+4 <= n; i += 4 {
		// float64: always exact, the flags are constants.
		s0, _ = fmaQuick(a[i], b[i], s0)
		s1, _ = fmaQuick(a[i+1], b[i+1], s1)
		s2, _ = fmaQuick(a[i+2], b[i+2], s2)
		s3, _ = fmaQuick(a[i+3], b[i+3], s3)
	}
	for ; i < n; i++ {
		s0, _ = fmaQuick(a[i], b[i], s0)
	}
	return (s0 + s2) + (s1 + s3)
}

// dot16Go is dot16Ref with fmaQuick.
func dot16Go[F Float](a, b []F) F {
	var s [16]F
	n := len(a)
	i := 0
	for ; i+16 <= n; i += 16 {
		x, y := a[i:i+16], b[i:i+16]
		for l := range s {
			v, ok := fmaQuick(x[l], y[l], s[l])
			if !ok {
				v = vec.FMA(x[l], y[l], s[l])
			}
			s[l] = v
		}
	}
	for ; i < n; i++ {
		v, ok := fmaQuick(a[i], b[i], s[0])
		if !ok {
			v = vec.FMA(a[i], b[i], s[0])
		}
		s[0] = v
	}
	return fold16(&s)
}

// accGo adds Σ_p A(i, p)·B(p, j) to c[i·ldc+j] in chain order, where
// A(i, p) = a[i·ars+p·aks] and B(p, j) = b[p·bks+j·bjs]. Two rows by four
// columns of C stay in registers over the whole of k, eight chains at once
// where the reference loop of AccNT runs one. AccNN and AccTN, whose B has
// contiguous rows, have the faster accRowsGo.
func accGo[F Float](m, n, k int, a []F, ars, aks int, b []F, bks, bjs int, c []F, ldc int) {
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
			exact := true
			for p := range k {
				x0, x1 := a[i*ars+p*aks], a[(i+1)*ars+p*aks]
				o := p*bks + j*bjs
				y0, y1, y2, y3 := b[o], b[o+bjs], b[o+2*bjs], b[o+3*bjs]
				var e0, e1, e2, e3, e4, e5, e6, e7 bool
				c00, e0 = fmaQuick(x0, y0, c00)
				c01, e1 = fmaQuick(x0, y1, c01)
				c02, e2 = fmaQuick(x0, y2, c02)
				c03, e3 = fmaQuick(x0, y3, c03)
				c10, e4 = fmaQuick(x1, y0, c10)
				c11, e5 = fmaQuick(x1, y1, c11)
				c12, e6 = fmaQuick(x1, y2, c12)
				c13, e7 = fmaQuick(x1, y3, c13)
				exact = exact && e0 && e1 && e2 && e3 && e4 && e5 && e6 && e7
			}
			if !exact {
				// A float32 tie on the way: the eight chains again, each
				// product checked (C still holds their starting values).
				for q := range 4 {
					c0[j+q] = chain(c0[j+q], k, a[i*ars:], aks, b[(j+q)*bjs:], bks)
					c1[j+q] = chain(c1[j+q], k, a[(i+1)*ars:], aks, b[(j+q)*bjs:], bks)
				}
				continue
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
func chain[F Float](s F, k int, x []F, xs int, y []F, ys int) F {
	for p := range k {
		v, ok := fmaQuick(x[p*xs], y[p*ys], s)
		if !ok {
			v = vec.FMA(x[p*xs], y[p*ys], s)
		}
		s = v
	}
	return s
}

// accRowsGo adds Σ_p A(i, p)·b[p·ldb+j] to c[i·ldc+j] in chain order,
// A(i, p) = a[i·ars+p·aks], for B with contiguous rows: each row of B is
// loaded once for four rows of C, whose elements each take one product
// per p — the reference loop's order, with a quarter of its loads of B.
func accRowsGo[F Float](m, n, k int, a []F, ars, aks int, b []F, ldb int, c []F, ldc int) {
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
				v0, e0 := fmaQuick(x0, y, c0[j])
				v1, e1 := fmaQuick(x1, y, c1[j])
				v2, e2 := fmaQuick(x2, y, c2[j])
				v3, e3 := fmaQuick(x3, y, c3[j])
				if !(e0 && e1 && e2 && e3) {
					v0, v1, v2, v3 = vec.FMA(x0, y, c0[j]), vec.FMA(x1, y, c1[j]), vec.FMA(x2, y, c2[j]), vec.FMA(x3, y, c3[j])
				}
				c0[j], c1[j], c2[j], c3[j] = v0, v1, v2, v3
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
				v, ok := fmaQuick(x, y, ci[j])
				if !ok {
					v = vec.FMA(x, y, ci[j])
				}
				ci[j] = v
			}
		}
	}
}

func accNNGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	accRowsGo(m, n, k, a, lda, 1, b, ldb, c, ldc)
}

func accTNGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	accRowsGo(m, n, k, a, 1, lda, b, ldb, c, ldc)
}

func accNTGo[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	accGo(m, n, k, a, lda, 1, b, 1, ldb, c, ldc)
}
