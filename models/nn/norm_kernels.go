package nn

// The group norm's elementwise passes over runs of values: AVX kernels
// (normVector) for the multiples of four, the scalar loops for the rest
// and elsewhere. Both round each operation as written here, so they give
// the same bits.

// outRun writes y = g·x̂ + b, x̂ = (x − μ)·s: forward's output.
func outRun(y, x []float64, mu, s, g, b float64) {
	y = y[:len(x)]
	i := 0
	if q := len(x) / 4; normVector && q > 0 {
		normOut(q, &y[0], &x[0], mu, s, g, b)
		i = 4 * q
	}
	outScalar(y[i:], x[i:], mu, s, g, b)
}

func outScalar(y, x []float64, mu, s, g, b float64) {
	y = y[:len(x)]
	for i, t := range x {
		t = float64((t - mu) * s)
		y[i] = g*t + b
	}
}

// projRun overwrites h with s·(h − mh − x̂·mxh), x̂ = (x − μ)·s: the
// projection P(h) of backward once the means mh = mean(h) and
// mxh = mean(x̂ h) are known.
func projRun(h, x []float64, mu, s, mh, mxh float64) {
	x = x[:len(h)]
	i := 0
	if q := len(h) / 4; normVector && q > 0 {
		normProj(q, &h[0], &x[0], mu, s, mh, mxh)
		i = 4 * q
	}
	projScalar(h[i:], x[i:], mu, s, mh, mxh)
}

func projScalar(h, x []float64, mu, s, mh, mxh float64) {
	x = x[:len(h)]
	for i, v := range h {
		h[i] = s * (v - mh - float64((x[i]-mu)*s)*mxh)
	}
}

// tangentRun writes r = R{x̂} = s·(rx − mr − x̂·a) and y = g·r + gu·x̂ + bu:
// rforward's second sweep over one channel.
func tangentRun(r, y, rx, xh []float64, s, mr, a, g, gu, bu float64) {
	r, y, xh = r[:len(rx)], y[:len(rx)], xh[:len(rx)]
	i := 0
	if q := len(rx) / 4; normVector && q > 0 {
		normTangent(q, &r[0], &y[0], &rx[0], &xh[0], s, mr, a, g, gu, bu)
		i = 4 * q
	}
	tangentScalar(r[i:], y[i:], rx[i:], xh[i:], s, mr, a, g, gu, bu)
}

func tangentScalar(r, y, rx, xh []float64, s, mr, a, g, gu, bu float64) {
	r, y, xh = r[:len(rx)], y[:len(rx)], xh[:len(rx)]
	for i, t := range rx {
		v := s * (t - mr - xh[i]*a)
		r[i] = v
		y[i] = g*v + gu*xh[i] + bu
	}
}

// rprojRun overwrites h with gx = P(h) and rh with R{gx} (see groupNorm):
// rbackward's second sweep, sa = s·a.
func rprojRun(h, rh, xh, rxh []float64, s, mh, mxh, mrxh, mrh, mxrh, sa float64) {
	rh, xh, rxh = rh[:len(h)], xh[:len(h)], rxh[:len(h)]
	i := 0
	if q := len(h) / 4; normVector && q > 0 {
		normRProj(q, &h[0], &rh[0], &xh[0], &rxh[0], s, mh, mxh, mrxh, mrh, mxrh, sa)
		i = 4 * q
	}
	rprojScalar(h[i:], rh[i:], xh[i:], rxh[i:], s, mh, mxh, mrxh, mrh, mxrh, sa)
}

func rprojScalar(h, rh, xh, rxh []float64, s, mh, mxh, mrxh, mrh, mxrh, sa float64) {
	rh, xh, rxh = rh[:len(h)], xh[:len(h)], rxh[:len(h)]
	for i, hv := range h {
		g := s * (hv - mh - xh[i]*mxh)
		rh[i] = s*(rh[i]-mrh-xh[i]*mxrh) - sa*g - s*(rxh[i]*mxh+xh[i]*mrxh)
		h[i] = g
	}
}
