package nn

import (
	"fmt"
	"math"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// The mean softmax cross-entropy of a batch plus an L2 term,
//
//	f(x) = (1/n) Σ_b [lse(Z_b) − Z_b,y_b] + (l2/2)‖x‖²,
//
// built from the four primitives as a model's loss would be: the
// gradient is VJP with G = (softmax(Z) − e_y)/n and the Hessian-vector
// product VJPR with R{G} = (p ⊙ R{Z} − p·(pᵀR{Z}))/n, p = softmax(Z),
// R{Z} = JVP(u). They serve benchmarks and tests; the models package
// builds its own losses from the primitives. The loss itself, its sums
// and l2 are float64 in a Net of either element type; G, R{G} and the
// gradients are F.

// Loss returns f(x) on the batch A with the given labels (one per sample).
func (net *Net[F]) Loss(x, A []F, labels []int, l2 float64) float64 {
	n := net.logitsFor(x, A, labels)
	c := net.info.classes
	var loss float64
	for b := range n {
		z := net.z[b*c : (b+1)*c]
		loss += logSumExp(z) - float64(z[labels[b]])
	}
	return loss/float64(n) + 0.5*l2*sumSquares(x)
}

// Grad writes ∇f(x) into dst and returns f(x).
func (net *Net[F]) Grad(dst, x, A []F, labels []int, l2 float64) float64 {
	net.checkParams("dst", dst)
	n := net.logitsFor(x, A, labels)
	loss := net.softmaxGrad(labels, n)
	clear(dst)
	net.VJP(dst, x, net.gz[:n*net.info.classes])
	if !vec.Is64[F]() {
		ss := l2Grad32(vec.View[float32](dst), vec.View[float32](x), float32(l2))
		return loss/float64(n) + 0.5*l2*ss
	}
	// ‖x‖² in the loop that adds l2·x: its chain of additions waits on
	// each one's latency, which hides the other loop's work (sumSquares'
	// order).
	var ss float64
	for i, v := range x {
		dst[i] += F(l2) * v
		ss += float64(v) * float64(v)
	}
	return loss/float64(n) + 0.5*l2*ss
}

// l2Grad32 adds l2·x to dst and returns ‖x‖² in float64, summed in eight
// interleaved partial sums (x_i into sum i mod 8) combined pairwise: the
// order of the vector kernel, which takes whole groups of eight, the loop
// here taking the rest (all of it without AVX). A float32 product is
// exact in float64, so only the additions round.
func l2Grad32(dst, x []float32, l2 float32) float64 {
	x = x[:len(dst)]
	var acc [8]float64
	i := 0
	if patchVector && len(x) >= 8 {
		i = len(x) &^ 7
		l2GradVec32(&dst[0], &x[0], i, l2, &acc)
	}
	for ; i < len(x); i++ {
		v := x[i]
		dst[i] += l2 * v
		acc[i&7] += float64(v) * float64(v)
	}
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
}

// HVP writes ∇²f(x)·u into dst.
func (net *Net[F]) HVP(dst, x, A []F, labels []int, l2 float64, u []F) {
	net.checkParams("dst", dst)
	n := net.logitsFor(x, A, labels)
	c := net.info.classes
	net.softmaxGrad(labels, n)
	net.JVP(net.rz[:n*c], x, u)
	SoftmaxRGrad(net.rgz[:n*c], net.p[:n*c], net.rz[:n*c], c, F(1/float64(n)))
	clear(dst)
	net.VJPR(dst, x, u, net.gz[:n*c], net.rgz[:n*c])
	vec.AddScaled(dst, F(l2), u)
}

// logitsFor checks the labels, runs Logits into net.z and returns n.
func (net *Net[F]) logitsFor(x, A []F, labels []int) int {
	n := len(labels)
	for b, y := range labels {
		if y < 0 || y >= net.info.classes {
			panic(fmt.Sprintf("nn: label %d of sample %d outside [0, %d)", y, b, net.info.classes))
		}
	}
	if n == 0 {
		panic("nn: empty batch")
	}
	net.reserve(n)
	net.Logits(net.z[:n*net.info.classes], x, A, n)
	return n
}

// softmaxGrad writes p = softmax(Z) into net.p and G = (p − e_y)/n into
// net.gz and returns the summed cross-entropy.
func (net *Net[F]) softmaxGrad(labels []int, n int) float64 {
	c := net.info.classes
	inv := F(1 / float64(n))
	var loss float64
	for b := range n {
		z, p, g := net.z[b*c:(b+1)*c], net.p[b*c:(b+1)*c], net.gz[b*c:(b+1)*c]
		lse := logSumExp(z)
		loss += lse - float64(z[labels[b]])
		for j := range c {
			p[j] = F(math.Exp(float64(z[j]) - lse))
			g[j] = p[j]
		}
		g[labels[b]]--
		for j := range g {
			g[j] *= inv
		}
	}
	return loss
}

// logSumExp returns log Σ exp(z_j) without overflow, in float64.
func logSumExp[F gemm.Float](z []F) float64 {
	m := math.Inf(-1)
	for _, v := range z {
		m = max(m, float64(v))
	}
	var s float64
	for _, v := range z {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}

// sumSquares returns ‖x‖² in float64.
func sumSquares[F gemm.Float](x []F) float64 {
	if !vec.Is64[F]() {
		// Grad's order in float32 (l2Grad32), so that Loss and Grad
		// return the same f(x).
		var acc [8]float64
		for i, v := range x {
			acc[i&7] += float64(v) * float64(v)
		}
		return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

// SoftmaxRGrad writes, for each row b of c classes, RG_b = inv·(p_b ⊙ RZ_b −
// p_b (p_bᵀRZ_b)): the derivative along u of the softmax cross-entropy's
// gradient inv·(p_b − e_y) with respect to the logits, given the
// probabilities P and the logits' derivative RZ along u (rows of c).
func SoftmaxRGrad[F gemm.Float](RG, P, RZ []F, c int, inv F) {
	for b := range len(P) / c {
		p, rz, rg := P[b*c:(b+1)*c], RZ[b*c:(b+1)*c], RG[b*c:(b+1)*c]
		var s F
		for j := range c {
			s += p[j] * rz[j]
		}
		for j := range c {
			rg[j] = inv * p[j] * (rz[j] - s)
		}
	}
}
