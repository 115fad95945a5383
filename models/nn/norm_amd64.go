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

// normLanes reports whether the group norm's running sums run eight groups
// at once in the 512-bit kernels of norm_lanes_amd64.s (HGPSIM_NOAVX512=1
// turns it off). The forward statistics need only AVX2 (normVector).
var normLanes = vec.HasAVX512()

//go:noescape
func normProjG(n int, gx, gy, x *float64, mu, s, gam, mh, mxh float64)

//go:noescape
func normTangentX(n int, r, y, rx, x, xh *float64, mu, s, mr, a, gam, gu, bu float64)

//go:noescape
func normSum8(stride, n int, x *float64, acc *[8][4]float64)

//go:noescape
func normSqDev8(stride, n int, x *float64, mu *[8][4]float64, acc *[8][4]float64)

//go:noescape
func normBackSums8(scr *float64, stride, n int, gy, x *float64, c *[3][8]float64, acc *[4][8]float64)

//go:noescape
func normRFwdSums8(scr *float64, stride, n int, rx, x *float64, c *[2][8]float64, acc *[2][8]float64)
