package vec

import "fmt"

// AddScaled sets dst[i] += alpha·s[i]. It panics when the lengths differ.
func AddScaled(dst []float64, alpha float64, s []float64) {
	if len(dst) != len(s) {
		panic(fmt.Sprintf("vec: AddScaled of lengths %d and %d", len(dst), len(s)))
	}
	addScaled(dst, alpha, s)
}

// DotRows sets dst[j] to the dot product of row j of m — the len(a)
// elements from m[j·stride] — with a, for every j < len(dst), each summed
// exactly as gonum's floats.Dot sums it (on amd64 with AVX2, four rows at a
// time). It panics when a row does not fit in m or stride < len(a).
func DotRows(dst, m []float64, stride int, a []float64) {
	if len(dst) > 0 && (stride < len(a) || (len(dst)-1)*stride+len(a) > len(m)) {
		panic(fmt.Sprintf("vec: DotRows of %d rows of %d with stride %d in %d elements", len(dst), len(a), stride, len(m)))
	}
	dotRows(dst, m, stride, a)
}
