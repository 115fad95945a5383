package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// groupNorm normalizes each group of C/G consecutive channels of each
// sample over its m = (C/G)·H·W values (contiguous in NCHW) and applies a
// per-channel affine map:
//
//	x̂ = (x − μ)·s,  s = 1/√(v + ε),  y = γ_c x̂ + β_c,
//
// μ and v the group's mean and (biased) variance. It stands in for batch
// normalization, whose batch statistics would make each sample's output
// depend on the other samples of the minibatch: the per-sample losses the
// bilevel problems weight and the client-level sums of federated methods
// both need a sample's loss to depend on that sample alone.
//
// With the self-adjoint projection P(v) = s·(v − mean(v) − x̂·mean(x̂ v)) of
// a group:
//
//	gx = P(h),  h = γ ⊙ gy,   gγ_c = Σ gy x̂,  gβ_c = Σ gy,
//	R{x̂} = P(rx),  ry = γ ⊙ R{x̂} + u_γ ⊙ x̂ + u_β,
//	R{gx} = −s·a·gx + P(R{h}) − s·(R{x̂}·mean(x̂ h) + x̂·mean(R{x̂} h)),
//
// with a = mean(x̂ rx) (so R{s} = −s²a) and R{h} = γ ⊙ rgy + u_γ ⊙ gy; the
// last mean(x̂ R{h}) term is inside P.
type groupNorm[F gemm.Float] struct {
	shape Shape
	g, m  int // groups, values per group
	plane int // H·W

	xhat, rxhat []F // per batch value: x̂, R{x̂} (both rforward)
	h           []F // one group: scratch for gx in rbackward
	mu, s, a    []F // per group of the batch: μ, s (forward), mean(x̂ rx) (rforward)

	// pool: the max pool after the norm when the two run fused (fuse.go).
	pool *pool[F]
}

const normEps = 1e-5

func newGroupNorm[F gemm.Float](sp Spec, in Shape) (layer[F], error) {
	if sp.Out < 1 || in.C%sp.Out != 0 {
		return nil, fmt.Errorf("%d groups: must be positive and divide the %d channels", sp.Out, in.C)
	}
	return &groupNorm[F]{shape: in, g: sp.Out, m: in.Size() / sp.Out, plane: in.H * in.W}, nil
}

func (l *groupNorm[F]) out() Shape   { return l.shape }
func (l *groupNorm[F]) params() int  { return 2 * l.shape.C }
func (l *groupNorm[F]) flops() int64 { return 0 }

func (l *groupNorm[F]) memory(n int) int64 {
	return vec.ElemSize[F]() * (int64(n)*(2*int64(l.shape.Size())+3*int64(l.g)) + int64(l.m))
}

func (l *groupNorm[F]) reserve(n int) {
	if len(l.s) < n*l.g {
		l.xhat = make([]F, n*l.shape.Size())
		l.rxhat = make([]F, n*l.shape.Size())
		l.mu = make([]F, n*l.g)
		l.s = make([]F, n*l.g)
		l.a = make([]F, n*l.g)
		l.h = make([]F, l.m)
	}
}

// init sets γ = 1 and β = 0, PyTorch's default.
func (l *groupNorm[F]) init(w []F, _ *rand.Rand) {
	c := l.shape.C
	for i := range c {
		w[i] = 1
	}
	clear(w[c : 2*c])
}

// channels returns the first channel of group q of the batch.
func (l *groupNorm[F]) channels(q int) int { return (q % l.g) * (l.shape.C / l.g) }

// The passes below work group by group and fuse what they can into two
// sweeps over a group's values: one that forms the per-value products and
// sums the means they need, one that writes the results.

func (l *groupNorm[F]) forward(y, x, w []F, n int) {
	l.forwardPlanes(x, w, 0, n, func(p int, xp []F, mu, s, g, b F) {
		outRun(y[p*l.plane:(p+1)*l.plane], xp, mu, s, g, b)
	})
}

// forwardPlanes sets μ and s of the groups of the n samples from b0 of the
// batch x and calls out on each of their channel planes p (of the batch)
// in order, with its inputs xp and what its outputs y = g·x̂ + b,
// x̂ = (x − μ)·s need: forward, or a pass that takes the outputs on to
// the next layers plane by plane while they are in L1 (fuse.go). A
// group's planes follow its statistics, which eight groups at a time have
// just read into L2. For b0 a multiple of 8, the groups take their
// statistics eight or one at a time as in a pass over the whole batch
// (which gives the same bits either way).
func (l *groupNorm[F]) forwardPlanes(x, w []F, b0, n int, out func(p int, xp []F, mu, s, g, b F)) {
	c := l.shape.C
	gamma, beta := w[:c], w[c:2*c]
	inv := F(1 / float64(l.m))
	q0, groups := b0*l.g, n*l.g
	lanesEnd := q0 // groups before it take their statistics eight at a time
	if normVector {
		lanesEnd = q0 + groups - groups%laneGroups
	}
	per := l.m / l.plane
	for q := q0; q < q0+groups; q++ {
		off := q * l.m
		xq := x[off : off+l.m]
		if q < lanesEnd {
			if (q-q0)%laneGroups == 0 {
				l.stats8(x, q)
			}
		} else {
			mu := sum(xq) * inv
			// Two passes: the variance as the mean of squared deviations
			// does not cancel catastrophically as E[x²] − μ² would.
			l.mu[q] = mu
			l.s[q] = F(1 / math.Sqrt(float64(sumSquaredDeviations(xq, mu)*inv+normEps)))
		}
		mu, s := l.mu[q], l.s[q]
		// x̂ is not kept: the passes that need it form it again from x,
		// bit for bit, which costs less than writing and reading it back.
		c0 := l.channels(q)
		for k := range per {
			p := k * l.plane
			out(q*per+k, xq[p:p+l.plane], mu, s, gamma[c0+k], beta[c0+k])
		}
	}
}

// backward: h = γ ⊙ gy and the affine gradients in one sweep, gx = P(h)
// in the next; both form x̂ again from x.
func (l *groupNorm[F]) backward(gx, gw, gy, x, _, w []F, n int) {
	l.backwardFrom(gx, gw, x, w, 0, n, func(q, k int) []F { return gy[q*l.m : (q+k)*l.m] })
}

// backwardFrom is backward on the n samples from b0 of the batch with the
// output gradients of groups q..q+k−1 from gyOf(q, k), asked for once per
// block of groups in order: the gradients of a batch, or of a few groups
// formed just then (fuse.go). Passes over consecutive ranges, each but
// the last a whole number of eight groups, give the bits of one pass over
// them all.
func (l *groupNorm[F]) backwardFrom(gx, gw, x, w []F, b0, n int, gyOf func(q, k int) []F) {
	c := l.shape.C
	gamma := w[:c]
	inv := F(1 / float64(l.m))
	q0, q1 := b0*l.g, (b0+n)*l.g // groups from q0 run eight at a time (norm_lanes.go)
	if lanes[F]() {
		for ; q0+laneGroups <= q1; q0 += laneGroups {
			l.backward8(gx, gw, gyOf(q0, laneGroups), x, gamma, q0)
		}
	}
	for q := q0; q < q1; q++ {
		off := q * l.m
		c0 := l.channels(q)
		mu, s := l.mu[q], l.s[q]
		gyq, xq := gyOf(q, 1)[:l.m], x[off:off+l.m]
		if gx == nil {
			for k := range l.m / l.plane {
				p := k * l.plane
				var sg, sb F
				xp := xq[p : p+l.plane]
				for i, t := range gyq[p : p+l.plane] {
					sg += t * F((xp[i]-mu)*s)
					sb += t
				}
				gw[c0+k] += sg
				gw[c+c0+k] += sb
			}
			continue
		}
		h := gx[off : off+l.m]
		var sh, sxh F
		for k := range l.m / l.plane {
			p := k * l.plane
			g := gamma[c0+k]
			var sg, sb F
			xp, hp := xq[p:p+l.plane], h[p:p+l.plane]
			for i, t := range gyq[p : p+l.plane] {
				xv := F((xp[i] - mu) * s)
				sg += t * xv
				sb += t
				v := g * t
				hp[i] = v
				sh += v
				sxh += xv * v
			}
			gw[c0+k] += sg
			gw[c+c0+k] += sb
		}
		mh, mxh := sh*inv, sxh*inv
		projRun(h, xq, mu, s, mh, mxh)
	}
}

// rforward: x̂ (kept for rbackward) and the means of rx and x̂ rx in one
// sweep, two groups side by side as in backward; R{x̂} = P(rx) and ry in
// the next.
func (l *groupNorm[F]) rforward(ry, rx, x, _, w, u []F, n int) {
	c := l.shape.C
	gamma := w[:c]
	ug, ub := u[:c], u[c:2*c]
	inv := F(1 / float64(l.m))
	groups := n * l.g
	q0 := 0 // groups before it run eight at a time (norm_lanes.go)
	if rx != nil && lanes[F]() {
		for ; q0+laneGroups <= groups; q0 += laneGroups {
			l.rforward8(ry, rx, x, gamma, ug, ub, q0)
		}
	}
	if rx != nil && normVector && !vec.Is64[F]() {
		for ; q0+laneGroups <= groups; q0 += laneGroups {
			l.rforward8x32(ry, rx, x, gamma, ug, ub, q0)
		}
	}
	for q := q0; q < groups; q += 2 {
		qb := min(q+1, groups-1)
		var sr, sxr [2]F
		if rx != nil {
			sr, sxr = l.rforwardSums(rx, x, q, qb)
		}
		for j, qq := range [2]int{q, qb} {
			if j == 1 && qb == q {
				break
			}
			off := qq * l.m
			xh, rxh, ryq := l.xhat[off:off+l.m], l.rxhat[off:off+l.m], ry[off:off+l.m]
			c0 := l.channels(qq)
			if rx == nil {
				mu, s := l.mu[qq], l.s[qq]
				clear(rxh)
				l.a[qq] = 0
				for k := range l.m / l.plane {
					p := k * l.plane
					gu, bu := ug[c0+k], ub[c0+k]
					hp, yp := xh[p:p+l.plane], ryq[p:p+l.plane]
					for i, t := range x[off+p : off+p+l.plane] {
						t = F((t - mu) * s)
						hp[i] = t
						yp[i] = gu*t + bu
					}
				}
				continue
			}
			rxq := rx[off : off+l.m]
			s, mr, a := l.s[qq], sr[j]*inv, sxr[j]*inv
			l.a[qq] = a
			for k := range l.m / l.plane {
				p := k * l.plane
				g, gu, bu := gamma[c0+k], ug[c0+k], ub[c0+k]
				tangentRun(rxh[p:p+l.plane], ryq[p:p+l.plane], rxq[p:p+l.plane], xh[p:p+l.plane], s, mr, a, g, gu, bu)
			}
		}
	}
}

// rforwardSums writes x̂ of groups qa and qb (qb = qa for one group) into
// l.xhat and returns Σ rx and Σ x̂ rx of each, in the order of the values.
func (l *groupNorm[F]) rforwardSums(rx, x []F, qa, qb int) (sr, sxr [2]F) {
	oa, ob := qa*l.m, qb*l.m
	mua, sa, mub, sb := l.mu[qa], l.s[qa], l.mu[qb], l.s[qb]
	ra, xa, ha := rx[oa:oa+l.m], x[oa:oa+l.m], l.xhat[oa:oa+l.m]
	rb, xb, hb := rx[ob:ob+l.m], x[ob:ob+l.m], l.xhat[ob:ob+l.m]
	xa, ha, rb, xb, hb = xa[:len(ra)], ha[:len(ra)], rb[:len(ra)], xb[:len(ra)], hb[:len(ra)]
	var sra, sxra, srb, sxrb F
	for i, t := range ra {
		xv := F((xa[i] - mua) * sa)
		ha[i] = xv
		sra += t
		sxra += xv * t
		u := rb[i]
		xw := F((xb[i] - mub) * sb)
		hb[i] = xw
		srb += u
		sxrb += xw * u
	}
	return [2]F{sra, srb}, [2]F{sxra, sxrb}
}

// rbackward: one sweep forms h = γ ⊙ gy and R{h} = γ ⊙ rgy + u_γ ⊙ gy,
// adds the affine parameters' R-gradients and sums the five means the
// results need; the next writes gx = P(h) and R{gx}.
func (l *groupNorm[F]) rbackward(gx, rgx, rgw, gy, rgy, _, _, _, _, w, u []F, n int) {
	c := l.shape.C
	gamma, ug := w[:c], u[:c]
	inv := F(1 / float64(l.m))
	q0 := 0 // groups before it run eight at a time (norm32_lanes.go)
	if rgx != nil && normLanes && !vec.Is64[F]() {
		for ; q0+laneGroups <= n*l.g; q0 += laneGroups {
			l.rbackward8x32(gx, rgx, rgw, gy, rgy, gamma, ug, q0)
		}
	}
	for q := q0; q < n*l.g; q++ {
		off := q * l.m
		c0 := l.channels(q)
		gyq, rgyq := gy[off:off+l.m], rgy[off:off+l.m]
		xh, rxh := l.xhat[off:off+l.m], l.rxhat[off:off+l.m]
		if rgx == nil && gx == nil {
			for k := range l.m / l.plane {
				p := k * l.plane
				var sg, sb F
				xp, rp, gp := xh[p:p+l.plane], rxh[p:p+l.plane], gyq[p:p+l.plane]
				for i, t := range rgyq[p : p+l.plane] {
					sg += t*xp[i] + gp[i]*rp[i]
					sb += t
				}
				rgw[c0+k] += sg
				rgw[c+c0+k] += sb
			}
			continue
		}
		if rgx == nil {
			panic("nn: groupNorm.rbackward: gx without rgx")
		}
		// R{gx} needs gx; when the caller does not want it (it has it
		// already), it is formed group by group in l.h.
		h := l.h
		if gx != nil {
			h = gx[off : off+l.m]
		}
		rh := rgx[off : off+l.m]
		var sh, sxh, srxh, srh, sxrh F
		for k := range l.m / l.plane {
			p := k * l.plane
			g, gu := gamma[c0+k], ug[c0+k]
			var sg, sb F
			rgp := rgyq[p : p+l.plane]
			// Sliced to rgp's length: the loop runs without bounds checks.
			xp, rp, gp := xh[p:p+len(rgp)], rxh[p:p+len(rgp)], gyq[p:p+len(rgp)]
			hp, rhp := h[p:p+len(rgp)], rh[p:p+len(rgp)]
			for i, t := range rgp {
				gv := gp[i]
				sg += t*xp[i] + gv*rp[i]
				sb += t
				hv := g * gv
				rv := g*t + gu*gv
				hp[i], rhp[i] = hv, rv
				sh += hv
				sxh += xp[i] * hv
				srxh += rp[i] * hv
				srh += rv
				sxrh += xp[i] * rv
			}
			rgw[c0+k] += sg
			rgw[c+c0+k] += sb
		}
		s := l.s[q]
		mh, mxh, mrxh, mrh, mxrh := sh*inv, sxh*inv, srxh*inv, srh*inv, sxrh*inv
		sa := s * l.a[q]
		rprojRun(h, rh, xh, rxh, s, mh, mxh, mrxh, mrh, mxrh, sa)
	}
}

// sum returns Σ v in four interleaved partial sums, (s₀ + s₁) + (s₂ + s₃):
// one running sum would wait for each addition to finish before the next.
func sum[F gemm.Float](v []F) F {
	var s0, s1, s2, s3 F
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += v[i]
		s1 += v[i+1]
		s2 += v[i+2]
		s3 += v[i+3]
	}
	for ; i < len(v); i++ {
		s0 += v[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// sumSquaredDeviations returns Σ (v − mu)² as sum sums.
func sumSquaredDeviations[F gemm.Float](v []F, mu F) F {
	var s0, s1, s2, s3 F
	i := 0
	for ; i+4 <= len(v); i += 4 {
		d0, d1, d2, d3 := v[i]-mu, v[i+1]-mu, v[i+2]-mu, v[i+3]-mu
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(v); i++ {
		d := v[i] - mu
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}
