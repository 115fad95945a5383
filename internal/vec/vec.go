package vec

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/floats"
)

// Float is an element type of the kernels: float64, in which every
// recorded result was computed, or float32, which halves memory and
// doubles the SIMD width. Every order contract holds in both, each product
// and each sum rounded to F.
type Float interface{ float32 | float64 }

// Is64 reports whether F is float64 (otherwise it is float32).
func Is64[F Float]() bool { return unsafe.Sizeof(F(0)) == 8 }

// ElemSize returns the bytes of one F: 8 for float64, 4 for float32.
func ElemSize[F Float]() int64 { return int64(unsafe.Sizeof(F(0))) }

// View views s as a slice of T, which must be F itself: generic code
// cannot convert a []F to a []float64 even where F is float64, and the
// kernels take their own element type. It reinterprets, never copies (a
// conversion through an interface would allocate); a nil s stays nil.
func View[T, F Float](s []F) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// AddScaled sets dst[i] += alpha·s[i], each product rounded to F and then
// added (never a fused multiply-add). It panics when the lengths differ.
func AddScaled[F Float](dst []F, alpha F, s []F) {
	if len(dst) != len(s) {
		panic(fmt.Sprintf("vec: AddScaled of lengths %d and %d", len(dst), len(s)))
	}
	if Is64[F]() {
		addScaled(View[float64](dst), float64(alpha), View[float64](s))
		return
	}
	addScaled32(View[float32](dst), float32(alpha), View[float32](s))
}

// AddScaledSumSquares adds alpha·s to dst as AddScaled does and returns
// ‖s‖² summed exactly as gonum's floats.Dot(s, s) sums it, in one pass
// over s (a regularized gradient's l2·x and ‖x‖²). It panics when the
// lengths differ.
func AddScaledSumSquares(dst []float64, alpha float64, s []float64) float64 {
	if len(dst) != len(s) {
		panic(fmt.Sprintf("vec: AddScaledSumSquares of lengths %d and %d", len(dst), len(s)))
	}
	return addScaledSumSquares(dst, alpha, s)
}

// addScaledSumSquaresGo is AddScaledSumSquares by definition, where the
// AVX2 kernel is not in use.
func addScaledSumSquaresGo(dst []float64, alpha float64, s []float64) float64 {
	floats.AddScaled(dst, alpha, s)
	return floats.Dot(s, s)
}

// addScaled32Go is the float32 AddScaled in Go. The conversion rounds the
// product on its own: without it the compiler may fuse it into the sum.
func addScaled32Go(dst []float32, alpha float32, s []float32) {
	s = s[:len(dst)]
	for i, v := range s {
		dst[i] += float32(alpha * v)
	}
}

// ScaleTo sets dst = c·s, each product in float64 and rounded once to F:
// in float64 floats.ScaleTo bit for bit, in float32 the widened value
// times c, rounded. dst may be s. It panics when the lengths differ.
func ScaleTo[F Float](dst []F, c float64, s []F) {
	if len(dst) != len(s) {
		panic(fmt.Sprintf("vec: ScaleTo of lengths %d and %d", len(dst), len(s)))
	}
	if Is64[F]() {
		floats.ScaleTo(View[float64](dst), c, View[float64](s))
		return
	}
	for i, v := range s {
		dst[i] = F(c * float64(v))
	}
}

// Narrow sets dst[i] = F(src[i]): each float64 rounded once to F (a
// copy for float64). src must hold at least len(dst) values.
func Narrow[F Float](dst []F, src []float64) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = F(v)
	}
}

// Widen sets dst[i] = float64(src[i]), exactly. src must hold at least
// len(dst) values.
func Widen[F Float](dst []float64, src []F) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = float64(v)
	}
}

// DotRows sets dst[j] to the dot product of row j of m — the len(a)
// elements from m[j·stride] — with a, for every j < len(dst), each summed
// exactly as gonum's floats.Dot sums it (on amd64 with AVX2, four rows at a
// time). It panics when a row does not fit in m or stride < len(a).
func DotRows(dst, m []float64, stride int, a []float64) {
	if len(dst) > 0 && (stride < len(a) || (len(dst)-1)*stride+len(a) > len(m)) {
		panic(fmt.Sprintf("vec: DotRows of %d rows of %d with stride %d in %d elements", len(dst), len(a), stride, len(m)))
	}
	dotRows(dst, m, stride, a)
}
