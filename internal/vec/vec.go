// Package vec holds the level-1 kernel that dominates hgpsim's time: the
// scaled addition dst += α·s of mixing and of the models' vector-Jacobian
// products. It computes exactly what gonum's floats.AddScaled computes —
// each coordinate is one rounded product and one rounded sum, never a fused
// multiply-add — so results are bit-identical whichever kernel runs; on
// amd64 with AVX2 it uses four lanes where gonum's assembly uses two.
package vec

import "fmt"

// AddScaled sets dst[i] += alpha·s[i]. It panics when the lengths differ.
func AddScaled(dst []float64, alpha float64, s []float64) {
	if len(dst) != len(s) {
		panic(fmt.Sprintf("vec: AddScaled of lengths %d and %d", len(dst), len(s)))
	}
	addScaled(dst, alpha, s)
}
