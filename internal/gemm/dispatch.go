package gemm

import "hgpsim/internal/vec"

// The kernels in use: the AVX2 ones where the CPU has AVX2 and
// HGPSIM_NOAVX2=1 is not set, else the pure-Go ones (same bits).
var (
	dotNT = pick(dotNTAVX2, dotNTGo)
	accNN = pick(accNNAVX2, accNNGo)
	accTN = pick(accTNAVX2, accTNGo)
	accNT = pick(accNTAVX2, accNTGo)
)

type kernel = func(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int)

func pick(avx2, pure kernel) kernel {
	if vec.HasAVX2() {
		return avx2
	}
	return pure
}
