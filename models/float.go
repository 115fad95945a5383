package models

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// Float is the element type of a model's x-sized vectors: float64 or
// float32 (see the package documentation's Precision).
type Float = gemm.Float

// logSumExp is vec.LogSumExp for F, evaluated in float64: for float64 it is
// that function, for float32 the same steps on the widened values.
func logSumExp[F Float](z []F) float64 {
	if vec.Is64[F]() {
		return vec.LogSumExp(vec.View[float64](z))
	}
	m := float64(z[0])
	for _, v := range z[1:] {
		m = max(m, float64(v))
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, v := range z {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}

// dotF returns aᵀb in float64 (gonum's floats.Dot for float64). For
// float32 the products are exact in float64 and summed in four interleaved
// partial sums, then added in a fixed order: deterministic, and four
// times fewer dependent additions than one running sum (‖x‖² of a CNN's
// five million parameters is a regularizer term of every gradient).
func dotF[F Float](a, b []F) float64 {
	if vec.Is64[F]() {
		return floats.Dot(vec.View[float64](a), vec.View[float64](b))
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// sumSquares returns ‖x‖² in float64: losses stay float64 in either
// precision (see the package documentation).
func sumSquares[F Float](x []F) float64 { return dotF(x, x) }

// addScaled adds alpha·s to dst with gonum's floats.AddScaled for float64
// and alpha rounded to F for float32.
func addScaled[F Float](dst []F, alpha float64, s []F) {
	if vec.Is64[F]() {
		floats.AddScaled(vec.View[float64](dst), alpha, vec.View[float64](s))
		return
	}
	addScaled32(dst, F(alpha), s)
}

// vecAddScaled is addScaled with internal/vec's kernel for float64, for the
// callers that always used it.
func vecAddScaled[F Float](dst []F, alpha float64, s []F) {
	if vec.Is64[F]() {
		vec.AddScaled(vec.View[float64](dst), alpha, vec.View[float64](s))
		return
	}
	addScaled32(dst, F(alpha), s)
}

// addScaledSumSquares adds alpha·s to dst and returns sumSquares(s), the
// same bits as the two calls, in one pass over s in float64.
func addScaledSumSquares[F Float](dst []F, alpha float64, s []F) float64 {
	if vec.Is64[F]() {
		return vec.AddScaledSumSquares(vec.View[float64](dst), alpha, vec.View[float64](s))
	}
	vecAddScaled(dst, alpha, s)
	return sumSquares(s)
}

func addScaled32[F Float](dst []F, a F, s []F) {
	s = s[:len(dst)]
	for i, v := range s {
		dst[i] += F(a * v) // the conversion keeps arm64 from fusing (Go spec)
	}
}

// addScaledTo adds alpha·s to the float64 dst (a λ-sized or class-sized
// accumulator) from an F vector.
func addScaledTo[F Float](dst []float64, alpha float64, s []F) {
	if vec.Is64[F]() {
		floats.AddScaled(dst, alpha, vec.View[float64](s))
		return
	}
	s = s[:len(dst)]
	for i, v := range s {
		dst[i] += float64(alpha * float64(v)) // rounded product, as on amd64
	}
}

// scale multiplies v by alpha (gonum's floats.Scale for float64).
func scale[F Float](alpha float64, v []F) {
	if vec.Is64[F]() {
		floats.Scale(alpha, vec.View[float64](v))
		return
	}
	a := F(alpha)
	for i := range v {
		v[i] *= a
	}
}

// resize returns b with length n, reallocated only when it is too short.
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// gatherAs is d.Gather for F (datasets.GatherAs, which writes the same
// bits for float64).
func gatherAs[F Float](d *datasets.Dataset, dst []F, idx []int) {
	if vec.Is64[F]() {
		d.Gather(vec.View[float64](dst), idx)
		return
	}
	datasets.GatherAs(d, dst, idx)
}
