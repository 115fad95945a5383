package pdbo

import (
	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/vec"
	"hgpsim/models"
)

// The family runs in F = float64 or float32 (the scenario's precision):
// the iterates z and x, the gradients, u and w and the messages are F.
// What stays float64 in either precision, and why: ω and the p̄ / δ̄
// counts (see optim.PushSumPair), λ and the λ-sized v = Σ_m B̂u and every
// d_λ product (a sum of M terms, each itself a sum over the d_x
// coordinates of u, which float32 would round to ε·M relative error
// while it costs d_λ ≪ d_x numbers per client), and the losses.
//
// The helpers below call gonum's routines for float64, so that the
// float64 instantiation keeps the bits it always had; for float32 each
// product is rounded to F before it is added (explicit conversions, which
// the compiler may not contract into fused multiply-adds), the same on
// every kernel path.

// addScaledTo sets dst = y + alpha·s (floats.AddScaledTo).
func addScaledTo[F vec.Float](dst, y []F, alpha float64, s []F) {
	if vec.Is64[F]() {
		floats.AddScaledTo(vec.View[float64](dst), vec.View[float64](y), alpha, vec.View[float64](s))
		return
	}
	a := F(alpha)
	y, s = y[:len(dst)], s[:len(dst)]
	for i := range dst {
		dst[i] = y[i] + F(a*s[i])
	}
}

// widen returns v in float64: v itself for float64 (a view), an exact
// copy for float32.
func widen[F vec.Float](v []F) []float64 {
	if v == nil {
		return nil
	}
	if vec.Is64[F]() {
		return vec.View[float64](v)
	}
	out := make([]float64, len(v))
	vec.Widen(out, v)
	return out
}

// Widen returns lin as a float64 linearization of model (the float64
// counterpart of lin.Model) at lin's point widened exactly: the input of
// the dense oracles, which are the float64 reference for a float32 run.
func Widen(lin Linearization[float32], model models.Bilevel[float64]) Linearization[float64] {
	return Linearization[float64]{ID: lin.ID, N: lin.N, Model: model, Inner: lin.Inner, Outer: lin.Outer,
		Lambda: lin.Lambda, Z: widen(lin.Z), Omega: lin.Omega, X: widen(lin.X), PBar: lin.PBar, DeltaBar: lin.DeltaBar,
		Links: lin.Links, Variant: lin.Variant, LR: lin.LR, WeightFloor: lin.WeightFloor, Batch: lin.Batch, Seed: lin.Seed}
}
