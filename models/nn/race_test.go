//go:build race

package nn

// raceBuild: the race detector's instrumentation changes how the compiler
// orders the operands of the Go loops' additions and multiplications, and
// with it which NaN payload a NaN op NaN returns (the Go specification
// leaves that open); the kernels follow the uninstrumented order.
const raceBuild = true
