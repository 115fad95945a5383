package nn

// maxPool2Row64 is pool.max2Plane's row for float64, n &^ 3 windows
// (pool64_amd64.s).
//
//go:noescape
func maxPool2Row64(n int, r0, r1, y *float64, arg *int32, base, w int)

// scatterPool2Row64 is pool.scatterPlane's row for float64 and a 2×2 pool
// of stride 2 that tiles its plane, n &^ 3 windows (pool64_amd64.s).
//
//go:noescape
func scatterPool2Row64(n int, gy *float64, arg *int32, d0, d1 *float64, base, w int)
