package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
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
type groupNorm struct {
	shape Shape
	g, m  int // groups, values per group
	plane int // H·W

	xhat, rxhat []float64 // per batch value: x̂ (forward), R{x̂} (rforward)
	h           []float64 // one group: scratch for gx in rbackward
	s, a        []float64 // per group of the batch: s (forward), mean(x̂ rx) (rforward)
}

const normEps = 1e-5

func newGroupNorm(sp Spec, in Shape) (layer, error) {
	if sp.Out < 1 || in.C%sp.Out != 0 {
		return nil, fmt.Errorf("%d groups: must be positive and divide the %d channels", sp.Out, in.C)
	}
	return &groupNorm{shape: in, g: sp.Out, m: in.Size() / sp.Out, plane: in.H * in.W}, nil
}

func (l *groupNorm) out() Shape   { return l.shape }
func (l *groupNorm) params() int  { return 2 * l.shape.C }
func (l *groupNorm) flops() int64 { return 0 }

func (l *groupNorm) memory(n int) int64 {
	return 8 * (int64(n)*(2*int64(l.shape.Size())+2*int64(l.g)) + int64(l.m))
}

func (l *groupNorm) reserve(n int) {
	if len(l.s) < n*l.g {
		l.xhat = make([]float64, n*l.shape.Size())
		l.rxhat = make([]float64, n*l.shape.Size())
		l.s = make([]float64, n*l.g)
		l.a = make([]float64, n*l.g)
		l.h = make([]float64, l.m)
	}
}

// init sets γ = 1 and β = 0, PyTorch's default.
func (l *groupNorm) init(w []float64, _ *rand.Rand) {
	c := l.shape.C
	for i := range c {
		w[i] = 1
	}
	clear(w[c : 2*c])
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func meanProd(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s / float64(len(a))
}

// channels returns the first channel of group q of the batch.
func (l *groupNorm) channels(q int) int { return (q % l.g) * (l.shape.C / l.g) }

func (l *groupNorm) forward(y, x, w []float64, n int) {
	c := l.shape.C
	gamma, beta := w[:c], w[c:2*c]
	for q := range n * l.g {
		off := q * l.m
		xq, xh, yq := x[off:off+l.m], l.xhat[off:off+l.m], y[off:off+l.m]
		mu := mean(xq)
		var v float64
		for _, t := range xq {
			v += (t - mu) * (t - mu)
		}
		s := 1 / math.Sqrt(v/float64(l.m)+normEps)
		l.s[q] = s
		for i, t := range xq {
			xh[i] = (t - mu) * s
		}
		c0 := l.channels(q)
		for k := range l.m / l.plane {
			g, bt := gamma[c0+k], beta[c0+k]
			p := k * l.plane
			for i, t := range xh[p : p+l.plane] {
				yq[p+i] = g*t + bt
			}
		}
	}
}

// project writes dst = s·(v − mean(v) − x̂·mean(x̂ v)) over one group.
func project(dst, v, xh []float64, s float64) {
	mv, mxv := mean(v), meanProd(xh, v)
	v, xh = v[:len(dst)], xh[:len(dst)]
	for i := range dst {
		dst[i] = s * (v[i] - mv - xh[i]*mxv)
	}
}

// scaleChannels writes h = γ_c·gy (+ u_c·g2 when u is not nil) over one
// group whose first channel is c0.
func (l *groupNorm) scaleChannels(h, gamma, gy, u, g2 []float64, c0 int) {
	for k := range l.m / l.plane {
		p := k * l.plane
		g := gamma[c0+k]
		hp, gp := h[p:p+l.plane], gy[p:p+l.plane]
		for i, t := range gp {
			hp[i] = g * t
		}
		if u != nil {
			uk := u[c0+k]
			for i, t := range g2[p : p+l.plane] {
				hp[i] += uk * t
			}
		}
	}
}

// addAffineGrads adds Σ gy·xh (+ Σ g2·xh2 when g2 is not nil) to the scale
// gradients and Σ gy to the shift gradients of the group's channels.
func (l *groupNorm) addAffineGrads(gw, gy, xh, g2, xh2 []float64, c0 int) {
	c := l.shape.C
	for k := range l.m / l.plane {
		p := k * l.plane
		var sg, sb float64
		for i, t := range gy[p : p+l.plane] {
			sg += t * xh[p+i]
			sb += t
		}
		if g2 != nil {
			for i, t := range g2[p : p+l.plane] {
				sg += t * xh2[p+i]
			}
		}
		gw[c0+k] += sg
		gw[c+c0+k] += sb
	}
}

func (l *groupNorm) backward(gx, gw, gy, _, _, w []float64, n int) {
	gamma := w[:l.shape.C]
	for q := range n * l.g {
		off := q * l.m
		c0 := l.channels(q)
		gyq, xh := gy[off:off+l.m], l.xhat[off:off+l.m]
		l.addAffineGrads(gw, gyq, xh, nil, nil, c0)
		if gx != nil {
			h := gx[off : off+l.m]
			l.scaleChannels(h, gamma, gyq, nil, nil, c0)
			project(h, h, xh, l.s[q])
		}
	}
}

func (l *groupNorm) rforward(ry, rx, _, _, w, u []float64, n int) {
	c := l.shape.C
	gamma := w[:c]
	ug, ub := u[:c], u[c:2*c]
	for q := range n * l.g {
		off := q * l.m
		xh, rxh, ryq := l.xhat[off:off+l.m], l.rxhat[off:off+l.m], ry[off:off+l.m]
		if rx == nil {
			clear(rxh)
			l.a[q] = 0
		} else {
			rxq := rx[off : off+l.m]
			l.a[q] = meanProd(xh, rxq)
			project(rxh, rxq, xh, l.s[q])
		}
		c0 := l.channels(q)
		for k := range l.m / l.plane {
			p := k * l.plane
			g, gu, bu := gamma[c0+k], ug[c0+k], ub[c0+k]
			for i, t := range rxh[p : p+l.plane] {
				ryq[p+i] = g*t + gu*xh[p+i] + bu
			}
		}
	}
}

func (l *groupNorm) rbackward(gx, rgx, rgw, gy, rgy, _, _, _, _, w, u []float64, n int) {
	c := l.shape.C
	gamma, ug := w[:c], u[:c]
	for q := range n * l.g {
		off := q * l.m
		c0 := l.channels(q)
		gyq, rgyq := gy[off:off+l.m], rgy[off:off+l.m]
		xh, rxh := l.xhat[off:off+l.m], l.rxhat[off:off+l.m]
		l.addAffineGrads(rgw, rgyq, xh, gyq, rxh, c0)
		if rgx == nil {
			if gx != nil {
				h := gx[off : off+l.m]
				l.scaleChannels(h, gamma, gyq, nil, nil, c0)
				project(h, h, xh, l.s[q])
			}
			continue
		}
		// R{gx} needs gx; when the caller does not want it (it has it
		// already), it is formed group by group in l.h.
		h := l.h
		if gx != nil {
			h = gx[off : off+l.m]
		}
		s := l.s[q]
		rh := rgx[off : off+l.m]
		l.scaleChannels(h, gamma, gyq, nil, nil, c0)
		l.scaleChannels(rh, gamma, rgyq, ug, gyq, c0)
		mxh, mrxh := meanProd(xh, h), meanProd(rxh, h)
		project(rh, rh, xh, s)
		project(h, h, xh, s)
		sa := s * l.a[q]
		for i := range rh {
			rh[i] += -sa*h[i] - s*(rxh[i]*mxh+xh[i]*mrxh)
		}
	}
}
