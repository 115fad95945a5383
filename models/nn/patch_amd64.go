package nn

import "hgpsim/internal/vec"

// patchRow5 is the AVX kernel of conv.im2rowDense for 5-wide kernels
// (patch_amd64.s).
//
//go:noescape
func patchRow5(nr int, dst, src *float64, runs *int)

// patchVector reports whether im2rowDense runs patchRow5: it follows the
// matrix kernels' choice (HGPSIM_NOAVX2=1 turns it off).
var patchVector = vec.HasAVX2()

// copyRuns is the AVX kernel of conv.im2colDense's short runs
// (patch_amd64.s).
//
//go:noescape
func copyRuns(n, w int, dst *float64, dstStride int, src *float64, srcStride int)

// addRuns is the AVX kernel of conv.col2imDense (patch_amd64.s).
//
//go:noescape
func addRuns(n, w int, dst *float64, dstStride int, src *float64, srcStride int)

// patchRows32 is the AVX kernel of conv.im2rowDense for float32 and 3- or
// 5-wide kernels: the patch rows of nox consecutive output positions
// (patch32_amd64.s).
//
//go:noescape
func patchRows32(kw, nox, nr int, dst *float32, ld int, src *float32, runs *int)

// copyRuns32 is copyRuns for float32 (patch32_amd64.s).
//
//go:noescape
func copyRuns32(n, w int, dst *float32, dstStride int, src *float32, srcStride int)

// addRuns32 is addRuns for float32 (patch32_amd64.s).
//
//go:noescape
func addRuns32(n, w int, dst *float32, dstStride int, src *float32, srcStride int)
