package gemm

// The kernels in use: the pure-Go ones unless an architecture's init
// installs faster ones with the same bits.
var (
	dotNT = dotNTGo
	accNN = accNNGo
	accTN = accTNGo
	accNT = accNTGo
)

// kernel is the signature every implementation of every kernel shares.
type kernel = func(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int)
