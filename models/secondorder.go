package models

import "hgpsim/datasets"

// SecondOrder is implemented by models with exact Hessian-vector products.
//
// Hyper-gradient methods need ∇²f(x)·u many times per outer step; finite
// differences of Grad would add a bias of order h² that the estimators'
// error analysis does not account for, so these products are analytic
// (Pearlmutter's R-operator: the directional derivative of the gradient
// computation along u, propagated through the same forward and backward
// passes).
type SecondOrder[F Float] interface {
	Model[F]

	// HVP writes dst = ∇²f(x)·u on the rows of d selected by idx,
	// regularizer included. It does not allocate. dst must not alias x or u.
	HVP(dst, x []F, d *datasets.Dataset, idx []int, u []F)
}
