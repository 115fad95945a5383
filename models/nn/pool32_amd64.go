package nn

// maxPool2Rows32 is pool.forwardMax2's rows for float32, n &^ 3 windows
// of each (pool32_amd64.s).
//
//go:noescape
func maxPool2Rows32(rows, n int, r0, y *float32, arg *int32, base, w int)

// scatterPool2Rows32 is scatterPool2Row64 for float32 over rows whole
// output rows at once (pool32_amd64.s).
//
//go:noescape
func scatterPool2Rows32(rows, n int, gy *float32, arg *int32, d0 *float32, base, w int)
