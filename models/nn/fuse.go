package nn

import "hgpsim/internal/gemm"

// A group norm followed by a 2×2 max pool (stride 2) runs fused: an
// activation as large as a first convolution's output (9.4 MB at batch
// 128 in norm-16-32) costs a trip through memory each time a layer writes
// or reads it, and the norm's output and its gradient feed only the pool
// and the norm. The fused passes go plane by plane (a window lies in one
// channel's plane, and a channel in one group) and call the layers' own
// loops and kernels on the same values in the same order, so they give
// the bits of the layers one after the other:
//
//   - forward: the norm writes each output plane to a scratch plane, the
//     pool reads it from there. After a convolution, the three run a few
//     samples at a time (Net.forwardConvNorm), so that the norm reads
//     the convolution's output from L2. No pass reads the norm's output again (the
//     pool's other passes read only its choices, the norm's its input), so
//     it is never written.
//   - backward: the norm reads its output gradient for a block of groups
//     (eight, or one) where the pool's scatter has just written it, the
//     first groups of the buffer that gradient would fill, in L2, instead
//     of the batch's gradient from memory, twice. VJP then leaves the rest
//     of that buffer stale, and a VJPR reusing VJP's backpropagation forms
//     it first (Net.formNormGrads). After a convolution, the three run a
//     few samples at a time (Net.backwardConvNorm), so that the
//     convolution reads the norm's input gradient from L2.

// fuseLayers turns the fused passes on; tests turn it off to compare.
var fuseLayers = true

// markFusions sets the pool of each group norm followed by a 2×2 max pool
// of stride 2 in ls.
func markFusions[F gemm.Float](ls []layer[F]) {
	for i := 0; i+1 < len(ls); i++ {
		gn, ok := ls[i].(*groupNorm[F])
		pl, isPool := ls[i+1].(*pool[F])
		if ok && isPool && pl.max && pl.kh == 2 && pl.kw == 2 && pl.s == 2 {
			gn.pool = pl
		}
	}
}

// fusedNorm returns the group norm at layer i when it runs fused with the
// pool after it, nil otherwise (and for i < 0).
func (net *Net[F]) fusedNorm(i int) *groupNorm[F] {
	if i < 0 {
		return nil
	}
	if gn, ok := net.layers[i].(*groupNorm[F]); ok && fuseLayers && gn.pool != nil {
		return gn
	}
	return nil
}

// forwardPooled is forward of the norm and then of its pool, which writes
// y, on the n samples from b0 of the norm's input x (see forwardPlanes).
func (l *groupNorm[F]) forwardPooled(y, x, w []F, b0, n int) {
	// rbackward's one-group scratch: free in a forward pass.
	scr := l.h[:l.plane]
	l.forwardPlanes(x, w, b0, n, func(p int, xp []F, mu, s, g, b F) {
		outRun(scr, xp, mu, s, g, b)
		l.pool.max2Plane(p, y, scr)
	})
}

// backwardPooled is backward of the pool and then of the norm on the n
// samples from b0 (see backwardFrom): gy is the pool's output gradient, gx
// the norm's input gradient, and buf holds the norm's output gradient of
// eight groups at a time.
func (l *groupNorm[F]) backwardPooled(gx, gw, gy, x, w, buf []F, b0, n int) {
	per := l.m / l.plane
	l.backwardFrom(gx, gw, x, w, b0, n, func(q, k int) []F {
		buf := buf[:k*l.m]
		for j := range k * per {
			l.pool.scatterPlane(buf[j*l.plane:(j+1)*l.plane], gy, q*per+j)
		}
		return buf
	})
}

// forwardConvNorm runs the forward passes of the convolution cv at layer
// i on its input x (parameters p) and of the fused norm and pool after it
// a block of samples at a time: the norm then reads the convolution's
// output while it is in L2. Each block is a whole number of the
// convolution's chunks and of eight groups, so every layer computes as
// over the whole batch.
func (net *Net[F]) forwardConvNorm(i int, cv *conv[F], gn *groupNorm[F], x, p []F, n int) {
	ni, no := cv.in.Size(), cv.o.Size()
	wc, wn := p[net.off[i]:net.off[i+1]], p[net.off[i+1]:net.off[i+2]]
	y := net.acts[i]
	block := laneGroups * cv.q
	for b0 := 0; b0 < n; b0 += block {
		m := min(block, n-b0)
		cv.forward(y[b0*no:(b0+m)*no], x[b0*ni:(b0+m)*ni], wc, m)
		gn.forwardPooled(net.acts[i+2], y, wn, b0, m)
	}
}

// backwardConvNorm is backward of the fused pool and norm at layers i+2
// and i+1 and of the convolution cv at i, a block of samples at a time
// (as forwardConvNorm), so that the convolution reads the norm's input
// gradient from L2: gy is the pool's output gradient, gx the
// convolution's input gradient (nil: none), dst the parameters' gradient.
func (net *Net[F]) backwardConvNorm(i int, cv *conv[F], gn *groupNorm[F], gx, dst, gy, p []F) {
	n := net.n
	wc, wn := p[net.off[i]:net.off[i+1]], p[net.off[i+1]:net.off[i+2]]
	gc, gg := dst[net.off[i]:net.off[i+1]], dst[net.off[i+1]:net.off[i+2]]
	x, _ := net.input(i)
	// The norm's input gradient and, in its first groups, its output
	// gradient.
	gxn, buf := net.gs[i][:n*net.inSize(i+1)], net.gs[i+1]
	block := laneGroups * cv.q
	cv.backwardStart(gx != nil, wc)
	for b0 := 0; b0 < n; b0 += block {
		m := min(block, n-b0)
		gn.backwardPooled(gxn, gg, gy, net.acts[i], wn, buf, b0, m)
		cv.backwardSamples(gx, gc, gxn, x, b0, b0+m)
	}
	cv.endWeightGrad(gc[:cv.o.C*cv.k])
}

// formNormGrads writes the output gradients of the fused norms that VJP
// left out (gsStale), for a VJPR that reuses its backpropagation.
func (net *Net[F]) formNormGrads() {
	n := net.n
	for i := range len(net.layers) - 1 {
		gn, ok := net.layers[i].(*groupNorm[F])
		if !ok || gn.pool == nil {
			continue
		}
		gy := net.gTop
		if i+1 < len(net.gs) {
			gy = net.gs[i+1]
		}
		gn.pool.scatter(net.gs[i][:n*net.inSize(i+1)], gy, n)
	}
	net.gsStale = false
}
