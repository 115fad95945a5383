package nn

// maxPool2Row64 is pool.max2Plane's row for float64, n &^ 3 windows
// (pool64_amd64.s).
//
//go:noescape
func maxPool2Row64(n int, r0, r1, y *float64, arg *int32, base, w int)
