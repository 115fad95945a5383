// Package vec holds the level-1 kernel that dominates hgpsim's time: the
// scaled addition dst += α·s of mixing and of the models' vector-Jacobian
// products. It computes exactly what gonum's floats.AddScaled computes —
// each coordinate is one rounded product and one rounded sum, never a fused
// multiply-add — so results are bit-identical whichever kernel runs; on
// amd64 with AVX2 it uses four lanes where gonum's assembly uses two.
//
// It may import the standard library and gonum (floats, the reference it
// matches) only.
package vec
