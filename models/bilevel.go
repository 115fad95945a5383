package models

import (
	"hgpsim/datasets"
	"math/rand/v2"
)

// Bilevel is one client's pair of costs in PDBO: the inner cost f(x, λ)
// minimized jointly by all clients, and the outer cost F(x, λ) the client's
// hyperparameters λ are tuned for, with the exact products that
// hyper-gradient estimation needs (PDBO paper Eq. 8–12).
//
// Every product is exact (analytic or Pearlmutter's R-operator) and, like
// Model, destination-first and allocation-free in steady state; a value is
// used by one goroutine (Clone gives each client its own).
type Bilevel[F Float] interface {
	DimX() int      // d_x, inner parameters
	DimLambda() int // d_λ, hyperparameters (0 for a plain model)

	// Init writes initial inner parameters into dst.
	Init(dst []F, r *rand.Rand)

	// InnerLoss returns f(x, λ) on the batch.
	InnerLoss(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64
	// InnerGrad writes ∇ₓf(x, λ) into dst and returns f.
	InnerGrad(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64
	// InnerHVP writes (∂ₓ∇ₓf)·u into dst (d_x).
	InnerHVP(dst, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F)
	// InnerCross writes (∂_λ∇ₓf)ᵀu into dst (d_λ): the gradient in λ of
	// ⟨∇ₓf(x, λ), u⟩.
	InnerCross(dst []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int, u []F)

	// OuterGrad writes ∂ₓF into dstX and ∂_λF into dstLambda and returns F.
	OuterGrad(dstX []F, dstLambda []float64, x []F, lambda []float64, d *datasets.Dataset, idx []int) float64

	// Accuracy is the fraction of correctly predicted rows under (x, λ).
	Accuracy(x []F, lambda []float64, d *datasets.Dataset, idx []int) float64

	Clone() Bilevel[F]
}

// PartialOuter is implemented by Bilevel models whose OuterGrad takes nil
// for the part not wanted and skips its work (the hyper-representation
// models, where ∂_λF backpropagates through the whole representation while
// ∂ₓF needs only the last layers). Other models want both destinations.
type PartialOuter[F Float] interface {
	Bilevel[F]
	// OuterGradTakesNil marks the implementation; it does nothing.
	OuterGradTakesNil()
}
