package gemm

// The kernels in use: the pure-Go ones unless an architecture's init
// installs faster ones with the same bits.
var (
	dotNT = dotNTGo[float64]
	accNN = accNNGo[float64]
	accTN = accTNGo[float64]
	accNT = accNTGo[float64]

	dotNT32 = dotNTGo[float32]
	accNN32 = accNNGo[float32]
	accTN32 = accTNGo[float32]
	accNT32 = accNTGo[float32]
)

// kernel is the signature every implementation of every kernel shares.
type kernel = func(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int)

// kernel32 is kernel in float32.
type kernel32 = func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int)

// path names the kernels in use, for benchmark headers.
var path = "go (pure-Go loops)"

// Path names the kernels this process uses: "go" (the pure-Go fallback:
// no AVX2, or HGPSIM_NOAVX2=1), "avx2" (256-bit) or "avx512" (the
// chain-order kernels on 512-bit registers), with what else they use.
// Every path gives the same bits.
func Path() string { return path }
