package gemm

import "fmt"

// DotNT sets c[i·ldc+j] = Σ_k a[i·lda+k]·b[j·ldb+k] for i < m, j < n, in
// dot order (package doc): each output is exactly floats.Dot of row i of a
// and row j of b.
func DotNT(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	checkShape("DotNT a", m, k, a, lda)
	checkShape("DotNT b", n, k, b, ldb)
	checkShape("DotNT c", m, n, c, ldc)
	if m == 0 || n == 0 {
		return // C is empty; its slice may be too.
	}
	dotNT(m, n, k, a, lda, b, ldb, c, ldc)
}

// AccNN adds Σ_k a[i·lda+k]·b[k·ldb+j] to c[i·ldc+j] for i < m, j < n, in
// chain order (package doc): C += A·B.
func AccNN(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	checkShape("AccNN a", m, k, a, lda)
	checkShape("AccNN b", k, n, b, ldb)
	checkShape("AccNN c", m, n, c, ldc)
	if m == 0 || n == 0 || k == 0 {
		return // nothing to add; empty operands' slices may be too.
	}
	accNN(m, n, k, a, lda, b, ldb, c, ldc)
}

// AccTN adds Σ_k a[k·lda+i]·b[k·ldb+j] to c[i·ldc+j] for i < m, j < n, in
// chain order: C += Aᵀ·B with A stored k × m.
func AccTN(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	checkShape("AccTN a", k, m, a, lda)
	checkShape("AccTN b", k, n, b, ldb)
	checkShape("AccTN c", m, n, c, ldc)
	if m == 0 || n == 0 || k == 0 {
		return // nothing to add; empty operands' slices may be too.
	}
	accTN(m, n, k, a, lda, b, ldb, c, ldc)
}

// AccNT adds Σ_k a[i·lda+k]·b[j·ldb+k] to c[i·ldc+j] for i < m, j < n, in
// chain order: C += A·Bᵀ with B stored n × k.
func AccNT(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	checkShape("AccNT a", m, k, a, lda)
	checkShape("AccNT b", n, k, b, ldb)
	checkShape("AccNT c", m, n, c, ldc)
	if m == 0 || n == 0 || k == 0 {
		return // nothing to add; empty operands' slices may be too.
	}
	accNT(m, n, k, a, lda, b, ldb, c, ldc)
}

// checkShape panics unless s holds a rows × cols matrix with leading
// dimension ld.
func checkShape(what string, rows, cols int, s []float64, ld int) {
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
