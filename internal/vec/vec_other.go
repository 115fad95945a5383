//go:build !amd64

package vec

import "gonum.org/v1/gonum/floats"

// HasAVX2 reports whether the AVX2 kernels are in use: never on this
// architecture.
func HasAVX2() bool { return false }

// HasAVX512 reports whether the 512-bit kernels are in use: never on this
// architecture.
func HasAVX512() bool { return false }

func addScaled(dst []float64, alpha float64, s []float64) { floats.AddScaled(dst, alpha, s) }

func addScaled32(dst []float32, alpha float32, s []float32) { addScaled32Go(dst, alpha, s) }

func dotRows(dst, m []float64, stride int, a []float64) {
	for j := range dst {
		dst[j] = floats.Dot(m[j*stride:j*stride+len(a)], a)
	}
}

func addScaledSumSquares(dst []float64, alpha float64, s []float64) float64 {
	return addScaledSumSquaresGo(dst, alpha, s)
}
