package nn

// The float32 twins of the group norm's elementwise kernels
// (norm32_amd64.s), eight values a step; they run on normVector.

//go:noescape
func normOut32(n int, y, x *float32, mu, s, gam, b float32)

//go:noescape
func normProj32(n int, h, x *float32, mu, s, mh, mxh float32)

//go:noescape
func normTangent32(n int, r, y, rx, xh *float32, s, mr, a, gam, gu, bu float32)

//go:noescape
func normRProj32(n int, h, rh, xh, rxh *float32, s, mh, mxh, mrxh, mrh, mxrh, sa float32)

//go:noescape
func normSum8x32(stride, n int, x *float32, acc *[8][4]float32)

//go:noescape
func normSqDev8x32(stride, n int, x *float32, mu *[8][4]float32, acc *[8][4]float32)

//go:noescape
func normTangentX32(n int, r, y, rx, x, xh *float32, mu, s, mr, a, gam, gu, bu float32)

//go:noescape
func normRFwdSums8x32(scr *float32, stride, n int, rx, x *float32, c *[2][8]float32, acc *[2][8]float32)

//go:noescape
func normRBackSums8x32(scr *float32, stride, n int, rgy, gy, xh, rxh *float32, c *[2][8]float32, acc *[7][8]float32)

//go:noescape
func normRProjG32(n int, gx, rgx, gy, rgy, xh, rxh *float32, gam, gu, s, mh, mxh, mrxh, mrh, mxrh, sa float32)
