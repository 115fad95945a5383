// Package vec holds the level-1 kernel that dominates hgpsim's time: the
// scaled addition dst += α·s of mixing and of the models' vector-Jacobian
// products. It computes exactly what gonum's floats.AddScaled computes —
// each coordinate is one rounded product and one rounded sum, never a fused
// multiply-add — so results are bit-identical whichever kernel runs; on
// amd64 with AVX2 it uses four lanes where gonum's assembly uses two.
// AddScaled and Combine are generic over Float (float64 or float32); in
// float32 each product and each sum is rounded to float32 under the same
// order contract, on every kernel path.
//
// FMA (and FMA32) is x·y + s rounded once, on any machine: the operation
// internal/gemm's matrix products are defined by.
//
// Tanh is math.Tanh over a slice, bit for bit: on amd64 with AVX2 and FMA
// its kernels compute, lane by lane, the operations math.Tanh performs there
// (including those of math.Exp's FMA branch, which it calls), and they run
// only after start-up probes confirm that math.Exp takes that branch.
//
// It may import the standard library and gonum (floats, the reference it
// matches) only.
package vec
