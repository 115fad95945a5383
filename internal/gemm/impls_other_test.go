//go:build !amd64

package gemm

// archImpls: there are no assembly kernels on this architecture.
func archImpls(string) []impl { return nil }
