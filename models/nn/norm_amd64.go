package nn

import "hgpsim/internal/vec"

// normVector reports whether the group norm's elementwise passes run the
// AVX kernels of norm_amd64.s: it follows the matrix kernels' choice
// (HGPSIM_NOAVX2=1 turns it off).
var normVector = vec.HasAVX2()

//go:noescape
func normOut(n int, y, x *float64, mu, s, gam, b float64)

//go:noescape
func normProj(n int, h, x *float64, mu, s, mh, mxh float64)

//go:noescape
func normTangent(n int, r, y, rx, xh *float64, s, mr, a, gam, gu, bu float64)

//go:noescape
func normRProj(n int, h, rh, xh, rxh *float64, s, mh, mxh, mrxh, mrh, mxrh, sa float64)
