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
type SecondOrder interface {
	Model

	// HVP writes dst = ∇²f(x)·u on the rows of d selected by idx,
	// regularizer included. It does not allocate. dst must not alias x or u.
	HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64)
}

// Every model of the package is second order.
var (
	_ SecondOrder = (*Softmax)(nil)
	_ SecondOrder = (*Logistic)(nil)
	_ SecondOrder = (*MLP)(nil)
)

// HVP writes dst = ∇²f(x)·u. Per row the gradient is (p − e_y) ⊗ [a; 1], and
// its derivative along u = (U, u_c) is R{p} ⊗ [a; 1] with
//
//	R{z} = U a + u_c,  R{p} = p ⊙ R{z} − p (pᵀR{z})
//
// (the softmax Jacobian diag(p) − ppᵀ applied to R{z}).
func (m *Softmax) HVP(dst, x []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.check(x, d)
	checkVec("dst", dst, m.Dim())
	checkVec("u", u, m.Dim())
	classifierHVP(m, &m.s, dst, x, d, idx, u)
}
