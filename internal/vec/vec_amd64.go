package vec

import (
	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/cpuid"
)

// hasAVX2 selects the four-lane kernel; the environment variable
// HGPSIM_NOAVX2=1 turns it off (to measure it, or to rule it out).
var hasAVX2 = cpu.X86.HasAVX2 && !noAVX2()

// HasAVX2 reports whether the AVX2 kernels are in use: the CPU has AVX2 and
// HGPSIM_NOAVX2=1 is not set. Other packages' kernels follow the same choice.
func HasAVX2() bool { return hasAVX2 }

// hasAVX512 selects the 512-bit kernels: the AVX2 ones are in use, the core
// runs 512-bit operations whole (cpuid.Wide512) and HGPSIM_NOAVX512=1 is
// not set.
var hasAVX512 = hasAVX2 && cpuid.Wide512() && !noAVX512()

// HasAVX512 reports whether the 512-bit kernels are in use. Other packages'
// kernels follow the same choice; every path gives the same bits.
func HasAVX512() bool { return hasAVX512 }

// axpyAVX2 sets y[i] += alpha·x[i] with separate VMULPD and VADDPD.
//
//go:noescape
func axpyAVX2(alpha float64, x, y []float64)

func addScaled(dst []float64, alpha float64, s []float64) {
	if hasAVX2 {
		axpyAVX2(alpha, s, dst)
		return
	}
	floats.AddScaled(dst, alpha, s)
}

// axpySumSquaresAVX2 is axpyAVX2 that also returns Σ x_i² in gonum's
// DotUnitary order.
//
//go:noescape
func axpySumSquaresAVX2(alpha float64, x, y []float64) float64

func addScaledSumSquares(dst []float64, alpha float64, s []float64) float64 {
	if hasAVX2 {
		return axpySumSquaresAVX2(alpha, s, dst)
	}
	return addScaledSumSquaresGo(dst, alpha, s)
}

// axpy32AVX2 is axpyAVX2 in float32: separate VMULPS and VADDPS.
//
//go:noescape
func axpy32AVX2(alpha float32, x, y []float32)

func addScaled32(dst []float32, alpha float32, s []float32) {
	if hasAVX2 {
		axpy32AVX2(alpha, s, dst)
		return
	}
	addScaled32Go(dst, alpha, s)
}

// dot4AVX2 computes four dot products with a, each summed as gonum's
// DotUnitary sums it.
//
//go:noescape
func dot4AVX2(a []float64, r0, r1, r2, r3 *float64, out *[4]float64)

func dotRows(dst, m []float64, stride int, a []float64) {
	j := 0
	if hasAVX2 && len(a) > 0 {
		n := len(a)
		var out [4]float64
		for ; j+4 <= len(dst); j += 4 {
			r := m[j*stride : (j+3)*stride+n] // bounds: the fourth row ends inside m
			dot4AVX2(a, &r[0], &r[stride], &r[2*stride], &r[3*stride], &out)
			copy(dst[j:j+4], out[:])
		}
	}
	for ; j < len(dst); j++ {
		dst[j] = floats.Dot(m[j*stride:j*stride+len(a)], a)
	}
}
