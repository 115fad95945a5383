package nn

// The group norm's elementwise passes over runs of values: AVX kernels
// (normVector) for the multiples of four, the scalar loops for the rest
// and elsewhere. Both round each operation as written here, so they give
// the same bits. float32 runs eight values a step in its own kernels
// (norm32_amd64.s) for the passes outside the eight-group sums.

import (
	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// outRun writes y = g·x̂ + b, x̂ = (x − μ)·s: forward's output.
func outRun[F gemm.Float](y, x []F, mu, s, g, b F) {
	y = y[:len(x)]
	i := 0
	if q := len(x) / 4; normVector && vec.Is64[F]() && q > 0 {
		normOut(q, ptr64(y), ptr64(x), float64(mu), float64(s), float64(g), float64(b))
		i = 4 * q
	} else if q := len(x) / 8; normVector && !vec.Is64[F]() && q > 0 {
		normOut32(q, ptr32(y), ptr32(x), float32(mu), float32(s), float32(g), float32(b))
		i = 8 * q
	}
	outScalar(y[i:], x[i:], mu, s, g, b)
}

func outScalar[F gemm.Float](y, x []F, mu, s, g, b F) {
	y = y[:len(x)]
	for i, t := range x {
		t = F((t - mu) * s)
		y[i] = g*t + b
	}
}

// projRun overwrites h with s·(h − mh − x̂·mxh), x̂ = (x − μ)·s: the
// projection P(h) of backward once the means mh = mean(h) and
// mxh = mean(x̂ h) are known.
func projRun[F gemm.Float](h, x []F, mu, s, mh, mxh F) {
	x = x[:len(h)]
	i := 0
	if q := len(h) / 4; normVector && vec.Is64[F]() && q > 0 {
		normProj(q, ptr64(h), ptr64(x), float64(mu), float64(s), float64(mh), float64(mxh))
		i = 4 * q
	} else if q := len(h) / 8; normVector && !vec.Is64[F]() && q > 0 {
		normProj32(q, ptr32(h), ptr32(x), float32(mu), float32(s), float32(mh), float32(mxh))
		i = 8 * q
	}
	projScalar(h[i:], x[i:], mu, s, mh, mxh)
}

func projScalar[F gemm.Float](h, x []F, mu, s, mh, mxh F) {
	x = x[:len(h)]
	for i, v := range h {
		h[i] = s * (v - mh - F((x[i]-mu)*s)*mxh)
	}
}

// tangentRun writes r = R{x̂} = s·(rx − mr − x̂·a) and y = g·r + gu·x̂ + bu:
// rforward's second sweep over one channel.
func tangentRun[F gemm.Float](r, y, rx, xh []F, s, mr, a, g, gu, bu F) {
	r, y, xh = r[:len(rx)], y[:len(rx)], xh[:len(rx)]
	i := 0
	if q := len(rx) / 4; normVector && vec.Is64[F]() && q > 0 {
		normTangent(q, ptr64(r), ptr64(y), ptr64(rx), ptr64(xh),
			float64(s), float64(mr), float64(a), float64(g), float64(gu), float64(bu))
		i = 4 * q
	} else if q := len(rx) / 8; normVector && !vec.Is64[F]() && q > 0 {
		normTangent32(q, ptr32(r), ptr32(y), ptr32(rx), ptr32(xh),
			float32(s), float32(mr), float32(a), float32(g), float32(gu), float32(bu))
		i = 8 * q
	}
	tangentScalar(r[i:], y[i:], rx[i:], xh[i:], s, mr, a, g, gu, bu)
}

func tangentScalar[F gemm.Float](r, y, rx, xh []F, s, mr, a, g, gu, bu F) {
	r, y, xh = r[:len(rx)], y[:len(rx)], xh[:len(rx)]
	for i, t := range rx {
		v := s * (t - mr - xh[i]*a)
		r[i] = v
		y[i] = g*v + gu*xh[i] + bu
	}
}

// rprojRun overwrites h with gx = P(h) and rh with R{gx} (see groupNorm):
// rbackward's second sweep, sa = s·a.
func rprojRun[F gemm.Float](h, rh, xh, rxh []F, s, mh, mxh, mrxh, mrh, mxrh, sa F) {
	rh, xh, rxh = rh[:len(h)], xh[:len(h)], rxh[:len(h)]
	i := 0
	if q := len(h) / 4; normVector && vec.Is64[F]() && q > 0 {
		normRProj(q, ptr64(h), ptr64(rh), ptr64(xh), ptr64(rxh),
			float64(s), float64(mh), float64(mxh), float64(mrxh), float64(mrh), float64(mxrh), float64(sa))
		i = 4 * q
	} else if q := len(h) / 8; normVector && !vec.Is64[F]() && q > 0 {
		normRProj32(q, ptr32(h), ptr32(rh), ptr32(xh), ptr32(rxh),
			float32(s), float32(mh), float32(mxh), float32(mrxh), float32(mrh), float32(mxrh), float32(sa))
		i = 8 * q
	}
	rprojScalar(h[i:], rh[i:], xh[i:], rxh[i:], s, mh, mxh, mrxh, mrh, mxrh, sa)
}

func rprojScalar[F gemm.Float](h, rh, xh, rxh []F, s, mh, mxh, mrxh, mrh, mxrh, sa F) {
	rh, xh, rxh = rh[:len(h)], xh[:len(h)], rxh[:len(h)]
	for i, hv := range h {
		g := s * (hv - mh - xh[i]*mxh)
		rh[i] = s*(rh[i]-mrh-xh[i]*mxrh) - sa*g - s*(rxh[i]*mxh+xh[i]*mrxh)
		h[i] = g
	}
}

// projGRun writes gx = P(h), h = g·gy formed again from gy: projRun for
// the passes whose sums did not store h.
func projGRun[F gemm.Float](gx, gy, x []F, mu, s, g, mh, mxh F) {
	gy, x = gy[:len(gx)], x[:len(gx)]
	i := 0
	if q := len(gx) / 4; normVector && vec.Is64[F]() && q > 0 {
		normProjG(q, ptr64(gx), ptr64(gy), ptr64(x), float64(mu), float64(s), float64(g), float64(mh), float64(mxh))
		i = 4 * q
	}
	projGScalar(gx[i:], gy[i:], x[i:], mu, s, g, mh, mxh)
}

func projGScalar[F gemm.Float](gx, gy, x []F, mu, s, g, mh, mxh F) {
	gy, x = gy[:len(gx)], x[:len(gx)]
	for i, t := range gy {
		v := F(g * t)
		gx[i] = s * (v - mh - F((x[i]-mu)*s)*mxh)
	}
}

// tangentXRun is tangentRun with x̂ = (x − μ)·s formed from x and written
// to xh.
func tangentXRun[F gemm.Float](r, y, rx, x, xh []F, mu, s, mr, a, g, gu, bu F) {
	r, y, x, xh = r[:len(rx)], y[:len(rx)], x[:len(rx)], xh[:len(rx)]
	i := 0
	if q := len(rx) / 4; normVector && vec.Is64[F]() && q > 0 {
		normTangentX(q, ptr64(r), ptr64(y), ptr64(rx), ptr64(x), ptr64(xh),
			float64(mu), float64(s), float64(mr), float64(a), float64(g), float64(gu), float64(bu))
		i = 4 * q
	} else if q := len(rx) / 8; normVector && !vec.Is64[F]() && q > 0 {
		normTangentX32(q, ptr32(r), ptr32(y), ptr32(rx), ptr32(x), ptr32(xh),
			float32(mu), float32(s), float32(mr), float32(a), float32(g), float32(gu), float32(bu))
		i = 8 * q
	}
	tangentXScalar(r[i:], y[i:], rx[i:], x[i:], xh[i:], mu, s, mr, a, g, gu, bu)
}

func tangentXScalar[F gemm.Float](r, y, rx, x, xh []F, mu, s, mr, a, g, gu, bu F) {
	r, y, x, xh = r[:len(rx)], y[:len(rx)], x[:len(rx)], xh[:len(rx)]
	for i, t := range rx {
		xv := F((x[i] - mu) * s)
		xh[i] = xv
		v := s * (t - mr - xv*a)
		r[i] = v
		y[i] = g*v + gu*xv + bu
	}
}
