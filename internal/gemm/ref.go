package gemm

import "hgpsim/internal/vec"

// The reference kernels: the orders of the package doc written as plain
// loops. They define the results every faster kernel must reproduce bit for
// bit. Every product enters its sum by vec.FMA, rounded once, as the
// kernels' fused multiply-add instructions compute it.

// dotRef returns Σ a[i]·b[i] in dot order: float64's four partial sums,
// or float32's sixteen (dot16Ref).
func dotRef[F Float](a, b []F) F {
	if !vec.Is64[F]() {
		return dot16Ref(a, b)
	}
	var s0, s1, s2, s3 F
	n := len(a)
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 = vec.FMA(a[i], b[i], s0)
		s1 = vec.FMA(a[i+1], b[i+1], s1)
		s2 = vec.FMA(a[i+2], b[i+2], s2)
		s3 = vec.FMA(a[i+3], b[i+3], s3)
	}
	for ; i < n; i++ {
		s0 = vec.FMA(a[i], b[i], s0)
	}
	return (s0 + s2) + (s1 + s3)
}

// dot16Ref returns Σ a[i]·b[i] in float32's dot order: sixteen partial
// sums s_l over i ≡ l (mod 16), the remainder added to s_0, folded by
// fold16.
func dot16Ref[F Float](a, b []F) F {
	var s [16]F
	n := len(a)
	i := 0
	for ; i+16 <= n; i += 16 {
		x, y := a[i:i+16], b[i:i+16]
		for l := range s {
			s[l] = vec.FMA(x[l], y[l], s[l])
		}
	}
	for ; i < n; i++ {
		s[0] = vec.FMA(a[i], b[i], s[0])
	}
	return fold16(&s)
}

// fold16 adds float32's sixteen partial sums in dot order:
// t_l = s_l + s_{l+8}, then ((t_0 + t_4) + (t_2 + t_6)) + ((t_1 + t_5) +
// (t_3 + t_7)).
func fold16[F Float](s *[16]F) F {
	var t [8]F
	for l := range t {
		t[l] = s[l] + s[l+8]
	}
	return ((t[0] + t[4]) + (t[2] + t[6])) + ((t[1] + t[5]) + (t[3] + t[7]))
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
				ci[j] = vec.FMA(aip, bp[j], ci[j])
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
				ci[j] = vec.FMA(api, bp[j], ci[j])
			}
		}
	}
}

func accNTRef[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	for i := range m {
		for j := range n {
			s := c[i*ldc+j]
			for p := range k {
				s = vec.FMA(a[i*lda+p], b[j*ldb+p], s)
			}
			c[i*ldc+j] = s
		}
	}
}
