//go:build !amd64

package gemm

// Without the amd64 kernels the AVX2 names are the pure-Go kernels, so the
// tests that compare both still compile (and compare Go with itself).
var (
	dotNTAVX2 = dotNTGo
	accNNAVX2 = accNNGo
	accTNAVX2 = accTNGo
	accNTAVX2 = accNTGo
)
