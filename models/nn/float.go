package nn

import (
	"math"
	"unsafe"

	"hgpsim/internal/gemm"
)

// elemSize returns the bytes of one F: 8 for float64, 4 for float32.
func elemSize[F gemm.Float]() int64 { return int64(unsafe.Sizeof(F(0))) }

// is64 reports whether F is float64.
func is64[F gemm.Float]() bool { return unsafe.Sizeof(F(0)) == 8 }

// reslice views s as a slice of T, which must be F itself: the bit-level
// routines have a float64 and a float32 form, and a generic caller hands
// its slices to the one for F without copying (a conversion through an
// interface would allocate).
func reslice[T, F gemm.Float](s []F) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// ptr64 returns &s[0] as a *float64, for the float64 assembly kernels; F
// must be float64. It is a plain address, where reslice would build a
// slice header on every call of a kernel run per patch row.
func ptr64[F gemm.Float](s []F) *float64 { return (*float64)(unsafe.Pointer(&s[0])) }

// sameBits reports whether a and b hold the same bits.
func sameBits[F gemm.Float](a, b []F) bool {
	if !is64[F]() {
		b32 := reslice[float32](b)
		for i, v := range reslice[float32](a) {
			if math.Float32bits(v) != math.Float32bits(b32[i]) {
				return false
			}
		}
		return true
	}
	b64 := reslice[float64](b)
	for i, v := range reslice[float64](a) {
		if math.Float64bits(v) != math.Float64bits(b64[i]) {
			return false
		}
	}
	return true
}

// ptr32 is ptr64 for the float32 assembly kernels; F must be float32.
func ptr32[F gemm.Float](s []F) *float32 { return (*float32)(unsafe.Pointer(&s[0])) }
