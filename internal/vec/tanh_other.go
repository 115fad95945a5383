//go:build !amd64

package vec

func tanh(dst, src []float64) { tanhGo(dst, src) }

// tanhKernel names the kernel Tanh uses, for the tests' logs.
func tanhKernel() string { return "math.Tanh" }
