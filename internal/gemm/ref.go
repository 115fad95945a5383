package gemm

import "unsafe"

// The reference kernels: the orders of the package doc written as plain
// loops. They define the results every faster kernel must reproduce bit for
// bit. F(x*y) (float64 or float32) forbids the compiler to fuse a product into the
// following addition (the Go spec allows fusion otherwise).

// dotRef returns Σ a[i]·b[i] in dot order: float64's four partial sums,
// or float32's eight (dot8Ref).
func dotRef[F Float](a, b []F) F {
	if unsafe.Sizeof(F(0)) == 4 {
		return dot8Ref(a, b)
	}
	var s0, s1, s2, s3 F
	n := len(a)
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += F(a[i] * b[i])
		s1 += F(a[i+1] * b[i+1])
		s2 += F(a[i+2] * b[i+2])
		s3 += F(a[i+3] * b[i+3])
	}
	for ; i < n; i++ {
		s0 += F(a[i] * b[i])
	}
	return (s0 + s2) + (s1 + s3)
}

// dot8Ref returns Σ a[i]·b[i] in float32's dot order: eight partial sums
// s_l over k ≡ l (mod 8), the remainder added to s_0, then
// ((s_0 + s_4) + (s_2 + s_6)) + ((s_1 + s_5) + (s_3 + s_7)).
func dot8Ref[F Float](a, b []F) F {
	var s0, s1, s2, s3, s4, s5, s6, s7 F
	n := len(a)
	i := 0
	for ; i+8 <= n; i += 8 {
		x, y := a[i:i+8], b[i:i+8]
		s0 += F(x[0] * y[0])
		s1 += F(x[1] * y[1])
		s2 += F(x[2] * y[2])
		s3 += F(x[3] * y[3])
		s4 += F(x[4] * y[4])
		s5 += F(x[5] * y[5])
		s6 += F(x[6] * y[6])
		s7 += F(x[7] * y[7])
	}
	for ; i < n; i++ {
		s0 += F(a[i] * b[i])
	}
	return ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))
}

func dotNTRef[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	for i := range m {
		ai := a[i*lda : i*lda+k]
		for j := range n {
			c[i*ldc+j] = dotRef(ai, b[j*ldb:j*ldb+k])
		}
	}
}

func accNNRef[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		for p := range k {
			aip := a[i*lda+p]
			bp := b[p*ldb : p*ldb+n]
			for j := range ci {
				ci[j] += F(aip * bp[j])
			}
		}
	}
}

func accTNRef[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		for p := range k {
			api := a[p*lda+i]
			bp := b[p*ldb : p*ldb+n]
			for j := range ci {
				ci[j] += F(api * bp[j])
			}
		}
	}
}

func accNTRef[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	for i := range m {
		for j := range n {
			s := c[i*ldc+j]
			for p := range k {
				s += F(a[i*lda+p] * b[j*ldb+p])
			}
			c[i*ldc+j] = s
		}
	}
}
