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
