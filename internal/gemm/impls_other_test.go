//go:build !amd64

package gemm

// archImpls: there are no assembly kernels on this architecture.
func archImpls[F Float](string) []impl[F] { return nil }

// zmm: the 512-bit kernels exist only on amd64.
const zmm = false
