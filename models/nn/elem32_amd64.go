package nn

// The elementwise float32 kernels of elem32_amd64.s. Each covers the first
// n &^ 7 values; its caller runs on patchVector and finishes with the Go
// loop, whose bits the kernel reproduces.

//go:noescape
func fill32(dst *float32, n int, v float32)

//go:noescape
func addConst32(dst *float32, n int, v float32)

//go:noescape
func relu32(dst, src *float32, n int)

//go:noescape
func reluMaskVec32(dst, src, y *float32, n int)

//go:noescape
func l2GradVec32(dst, x *float32, n int, l2 float32, acc *[8]float64)

//go:noescape
func sumRows4x32(steps int, x *float32, ld int, acc *[4][4]float32)
