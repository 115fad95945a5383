package nn

import (
	"math"
	"unsafe"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// ptr64 returns &s[0] as a *float64, for the float64 assembly kernels; F
// must be float64. It is a plain address, where vec.View would build a
// slice header on every call of a kernel run per patch row.
func ptr64[F gemm.Float](s []F) *float64 { return (*float64)(unsafe.Pointer(&s[0])) }

// sameBits reports whether a and b hold the same bits.
func sameBits[F gemm.Float](a, b []F) bool {
	if !vec.Is64[F]() {
		b32 := vec.View[float32](b)
		for i, v := range vec.View[float32](a) {
			if math.Float32bits(v) != math.Float32bits(b32[i]) {
				return false
			}
		}
		return true
	}
	b64 := vec.View[float64](b)
	for i, v := range vec.View[float64](a) {
		if math.Float64bits(v) != math.Float64bits(b64[i]) {
			return false
		}
	}
	return true
}

// ptr32 is ptr64 for the float32 assembly kernels; F must be float32.
func ptr32[F gemm.Float](s []F) *float32 { return (*float32)(unsafe.Pointer(&s[0])) }
