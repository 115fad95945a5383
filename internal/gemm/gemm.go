package gemm

import (
	"fmt"

	"hgpsim/internal/vec"
)

// Float is an element type of the kernels (vec.Float, the one constraint
// of the module's kernels): float64 or float32. The orders of the package
// doc hold in both, each fused multiply-add and each sum rounded once to
// F.
type Float = vec.Float

// run calls the kernel for F: k64 for float64, k32 for float32. The
// kernels take their own element type; the slices are reinterpreted, not
// copied, because F is exactly that type.
func run[F Float](k64 kernel, k32 kernel32, m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	if vec.Is64[F]() {
		k64(m, n, k, vec.View[float64](a), lda, vec.View[float64](b), ldb, vec.View[float64](c), ldc)
		return
	}
	k32(m, n, k, vec.View[float32](a), lda, vec.View[float32](b), ldb, vec.View[float32](c), ldc)
}

// DotNT sets c[i·ldc+j] = Σ_k a[i·lda+k]·b[j·ldb+k] for i < m, j < n, in
// dot order (package doc).
func DotNT[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	checkShape("DotNT a", m, k, a, lda)
	checkShape("DotNT b", n, k, b, ldb)
	checkShape("DotNT c", m, n, c, ldc)
	if m == 0 || n == 0 {
		return // C is empty; its slice may be too.
	}
	run(dotNT, dotNT32, m, n, k, a, lda, b, ldb, c, ldc)
}

// AccNN adds Σ_k a[i·lda+k]·b[k·ldb+j] to c[i·ldc+j] for i < m, j < n, in
// chain order (package doc): C += A·B.
func AccNN[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	checkShape("AccNN a", m, k, a, lda)
	checkShape("AccNN b", k, n, b, ldb)
	checkShape("AccNN c", m, n, c, ldc)
	if m == 0 || n == 0 || k == 0 {
		return // nothing to add; empty operands' slices may be too.
	}
	run(accNN, accNN32, m, n, k, a, lda, b, ldb, c, ldc)
}

// AccTN adds Σ_k a[k·lda+i]·b[k·ldb+j] to c[i·ldc+j] for i < m, j < n, in
// chain order: C += Aᵀ·B with A stored k × m.
func AccTN[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	checkShape("AccTN a", k, m, a, lda)
	checkShape("AccTN b", k, n, b, ldb)
	checkShape("AccTN c", m, n, c, ldc)
	if m == 0 || n == 0 || k == 0 {
		return // nothing to add; empty operands' slices may be too.
	}
	run(accTN, accTN32, m, n, k, a, lda, b, ldb, c, ldc)
}

// AccNT adds Σ_k a[i·lda+k]·b[j·ldb+k] to c[i·ldc+j] for i < m, j < n, in
// chain order: C += A·Bᵀ with B stored n × k.
func AccNT[F Float](m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
	checkShape("AccNT a", m, k, a, lda)
	checkShape("AccNT b", n, k, b, ldb)
	checkShape("AccNT c", m, n, c, ldc)
	if m == 0 || n == 0 || k == 0 {
		return // nothing to add; empty operands' slices may be too.
	}
	run(accNT, accNT32, m, n, k, a, lda, b, ldb, c, ldc)
}

// checkShape panics unless s holds a rows × cols matrix with leading
// dimension ld.
func checkShape[F Float](what string, rows, cols int, s []F, ld int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("gemm: %s has negative dimensions %d × %d", what, rows, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols {
		panic(fmt.Sprintf("gemm: %s: leading dimension %d < %d columns", what, ld, cols))
	}
	if (rows-1)*ld+cols > len(s) {
		panic(fmt.Sprintf("gemm: %s: %d × %d with leading dimension %d needs %d elements, has %d",
			what, rows, cols, ld, (rows-1)*ld+cols, len(s)))
	}
}
