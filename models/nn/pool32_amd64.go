package nn

// maxPool2Row32 is pool.forwardMax2's row for float32, n &^ 3 windows
// (pool32_amd64.s).
//
//go:noescape
func maxPool2Row32(n int, r0, r1, y *float32, arg *int32, base, w int)

// scatterPool2Row32 is scatterPool2Row64 for float32 (pool32_amd64.s).
//
//go:noescape
func scatterPool2Row32(n int, gy *float32, arg *int32, d0, d1 *float32, base, w int)
