package nn

// The elementwise float64 kernels of elem64_amd64.s. Each covers the first
// n &^ 3 values; its caller runs on patchVector and finishes with the Go
// loop, whose bits the kernel reproduces.

//go:noescape
func fill64(dst *float64, n int, v float64)

//go:noescape
func addConst64(dst *float64, n int, v float64)

//go:noescape
func relu64(dst, src *float64, n int)

//go:noescape
func reluMaskVec64(dst, src, y *float64, n int)

//go:noescape
func sumRows4(steps int, x *float64, ld int, acc *[4][4]float64)
