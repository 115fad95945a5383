package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/gemm"
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

	xhat, rxhat []F // per batch value: x̂ (forward), R{x̂} (rforward)
	h           []F // one group: scratch for gx in rbackward
	s, a        []F // per group of the batch: s (forward), mean(x̂ rx) (rforward)
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
	return elemSize[F]() * (int64(n)*(2*int64(l.shape.Size())+2*int64(l.g)) + int64(l.m))
}

func (l *groupNorm[F]) reserve(n int) {
	if len(l.s) < n*l.g {
		l.xhat = make([]F, n*l.shape.Size())
		l.rxhat = make([]F, n*l.shape.Size())
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
	c := l.shape.C
	gamma, beta := w[:c], w[c:2*c]
	inv := F(1 / float64(l.m))
	for q := range n * l.g {
		off := q * l.m
		xq, xh, yq := x[off:off+l.m], l.xhat[off:off+l.m], y[off:off+l.m]
		mu := sum(xq) * inv
		// Two passes: the variance as the mean of squared deviations does
		// not cancel catastrophically as E[x²] − μ² would.
		s := F(1 / math.Sqrt(float64(sumSquaredDeviations(xq, mu)*inv+normEps)))
		l.s[q] = s
		c0 := l.channels(q)
		for k := range l.m / l.plane {
			g, bt := gamma[c0+k], beta[c0+k]
			p := k * l.plane
			xp, hp, yp := xq[p:p+l.plane], xh[p:p+l.plane], yq[p:p+l.plane]
			for i, t := range xp {
				t = (t - mu) * s
				hp[i] = t
				yp[i] = g*t + bt
			}
		}
	}
}

// backward: h = γ ⊙ gy and the affine gradients in one sweep, gx = P(h)
// in the next.
func (l *groupNorm[F]) backward(gx, gw, gy, _, _, w []F, n int) {
	c := l.shape.C
	gamma := w[:c]
	inv := F(1 / float64(l.m))
	for q := range n * l.g {
		off := q * l.m
		c0 := l.channels(q)
		gyq, xh := gy[off:off+l.m], l.xhat[off:off+l.m]
		if gx == nil {
			for k := range l.m / l.plane {
				p := k * l.plane
				var sg, sb F
				hp := xh[p : p+l.plane]
				for i, t := range gyq[p : p+l.plane] {
					sg += t * hp[i]
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
			xp, hp := xh[p:p+l.plane], h[p:p+l.plane]
			for i, t := range gyq[p : p+l.plane] {
				sg += t * xp[i]
				sb += t
				v := g * t
				hp[i] = v
				sh += v
				sxh += xp[i] * v
			}
			gw[c0+k] += sg
			gw[c+c0+k] += sb
		}
		s, mh, mxh := l.s[q], sh*inv, sxh*inv
		xh = xh[:len(h)]
		for i, v := range h {
			h[i] = s * (v - mh - xh[i]*mxh)
		}
	}
}

// rforward: the means of rx and x̂ rx in one sweep, R{x̂} = P(rx) and ry in
// the next.
func (l *groupNorm[F]) rforward(ry, rx, _, _, w, u []F, n int) {
	c := l.shape.C
	gamma := w[:c]
	ug, ub := u[:c], u[c:2*c]
	inv := F(1 / float64(l.m))
	for q := range n * l.g {
		off := q * l.m
		xh, rxh, ryq := l.xhat[off:off+l.m], l.rxhat[off:off+l.m], ry[off:off+l.m]
		c0 := l.channels(q)
		if rx == nil {
			clear(rxh)
			l.a[q] = 0
			for k := range l.m / l.plane {
				p := k * l.plane
				gu, bu := ug[c0+k], ub[c0+k]
				yp := ryq[p : p+l.plane]
				for i, t := range xh[p : p+l.plane] {
					yp[i] = gu*t + bu
				}
			}
			continue
		}
		rxq := rx[off : off+l.m]
		xh = xh[:len(rxq)]
		var sr, sxr F
		for i, t := range rxq {
			sr += t
			sxr += xh[i] * t
		}
		s, mr, a := l.s[q], sr*inv, sxr*inv
		l.a[q] = a
		for k := range l.m / l.plane {
			p := k * l.plane
			g, gu, bu := gamma[c0+k], ug[c0+k], ub[c0+k]
			xp, rp, yp := xh[p:p+l.plane], rxh[p:p+l.plane], ryq[p:p+l.plane]
			for i, t := range rxq[p : p+l.plane] {
				r := s * (t - mr - xp[i]*a)
				rp[i] = r
				yp[i] = g*r + gu*xp[i] + bu
			}
		}
	}
}

// rbackward: one sweep forms h = γ ⊙ gy and R{h} = γ ⊙ rgy + u_γ ⊙ gy,
// adds the affine parameters' R-gradients and sums the five means the
// results need; the next writes gx = P(h) and R{gx}.
func (l *groupNorm[F]) rbackward(gx, rgx, rgw, gy, rgy, _, _, _, _, w, u []F, n int) {
	c := l.shape.C
	gamma, ug := w[:c], u[:c]
	inv := F(1 / float64(l.m))
	for q := range n * l.g {
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
			xp, rp, gp := xh[p:p+l.plane], rxh[p:p+l.plane], gyq[p:p+l.plane]
			hp, rhp := h[p:p+l.plane], rh[p:p+l.plane]
			for i, t := range rgyq[p : p+l.plane] {
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
		xh, rxh, rh = xh[:len(h)], rxh[:len(h)], rh[:len(h)]
		for i, hv := range h {
			g := s * (hv - mh - xh[i]*mxh)
			rh[i] = s*(rh[i]-mrh-xh[i]*mxrh) - sa*g - s*(rxh[i]*mxh+xh[i]*mrxh)
			h[i] = g
		}
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
