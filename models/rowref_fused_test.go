package models

import "hgpsim/internal/vec"

// The batch code's matrix products add each product by a fused
// multiply-add (internal/gemm's contract), so the row code takes its dot
// products and its per-row gradient updates the same way. The ℓ2 terms and
// the models' other level-1 operations keep gonum's separate multiply and
// add, as the batch code does.

// dotFused returns Σ a[i]·b[i] in gemm's float64 dot order: four partial
// sums over the whole blocks of four, the rest into the first in order,
// then (s0 + s2) + (s1 + s3), each product fused into its sum.
func dotFused(a, b []float64) float64 {
	var s [4]float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		for l := range s {
			s[l] = vec.FMA(a[i+l], b[i+l], s[l])
		}
	}
	for ; i < len(a); i++ {
		s[0] = vec.FMA(a[i], b[i], s[0])
	}
	return (s[0] + s[2]) + (s[1] + s[3])
}

// dotRowsFused sets dst[j] to dotFused of row j of m (stride apart) and a.
func dotRowsFused(dst, m []float64, stride int, a []float64) {
	for j := range dst {
		dst[j] = dotFused(m[j*stride:j*stride+len(a)], a)
	}
}

// addScaledFused adds alpha·s to dst, each element by one fused
// multiply-add.
func addScaledFused(dst []float64, alpha float64, s []float64) {
	for i := range dst {
		dst[i] = vec.FMA(alpha, s[i], dst[i])
	}
}
