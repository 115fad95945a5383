package fbo

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/models"
	"hgpsim/optim"
)

// compute does what stage st asks of the client and returns its upload,
// first then second (nil when the upload has one part), and its kind.
func (c *client) compute(st stage) (first, second []float64, kind optim.Kind) {
	dy := len(c.y)
	m := c.model
	switch st.kind {
	case stLowerA:
		copy(c.y, c.in[:dy])
		c.idxA = batch(c.idxA, c.gb)
		c.fresh()
		m.InnerGrad(c.gy0, c.y, c.x, c.train, c.idxA) // kept for One-Round-Lower's correction
		switch {
		case st.q < 0 || st.t < st.q:
			return c.gy0, nil, optim.KindUpdate
		case st.t == st.q:
			c.gradFy(c.gy, c.fb.Next())
			return c.gy0, c.gy, optim.KindUpdate
		default:
			zp := c.in[dy : 2*dy]
			c.fresh()
			m.InnerHVP(c.hv, c.y, c.x, c.train, c.gb.Next(), zp)
			floats.AddScaledTo(c.tmp, zp, -c.p.Lambda, c.hv)
			return c.gy0, c.tmp, optim.KindUpdate
		}
	case stLowerB:
		q := c.in[:dy]
		copy(c.yv, c.y)
		for v := range c.p.LowerLocal {
			idx := c.idxA
			if v > 0 {
				idx = c.gb.Next()
			}
			c.fresh()
			m.InnerGrad(c.gy, c.yv, c.x, c.train, idx)
			if c.p.Lower == "svrg" {
				if v > 0 {
					c.fresh()
					m.InnerGrad(c.tmp, c.y, c.x, c.train, idx)
				} else {
					copy(c.tmp, c.gy0) // the same sample as ∇G_i(y_v) at v = 0
				}
				floats.Sub(c.gy, c.tmp)
				floats.Add(c.gy, q)
			}
			floats.AddScaled(c.yv, -c.p.Beta, c.gy)
		}
		return c.yv, nil, optim.KindModel
	case stLowerLocal:
		copy(c.yv, c.in[:dy])
		for range c.p.LowerLocal {
			c.fresh()
			m.InnerGrad(c.gy, c.yv, c.x, c.train, c.gb.Next())
			floats.AddScaled(c.yv, -c.p.Beta, c.gy)
		}
		return c.yv, nil, optim.KindModel
	case stP0:
		copy(c.y, c.in[:dy])
		c.gradFy(c.gy, c.fb.Next())
		return c.gy, nil, optim.KindUpdate
	case stNeumann:
		p := c.in[:dy]
		if released(c.method) {
			// The released code: the client's own term c_i, started at p₀
			// (the p of the first round), uploaded as p_{t−1} + c_i. A
			// client that missed a round starts c_i from the p it got,
			// as the code's client does on its first call.
			if st.t == 1 || c.ctrIter != st.iter || c.ctrStep != st.t-1 {
				c.ctr = setVec(c.ctr, p)
			}
			c.ctrIter, c.ctrStep = st.iter, st.t
			c.fresh()
			m.InnerHVP(c.hv, c.y, c.x, c.train, c.gb.Next(), c.ctr)
			floats.AddScaled(c.ctr, -c.p.Lambda, c.hv)
			floats.AddTo(c.tmp, p, c.ctr)
			return c.tmp, nil, optim.KindUpdate
		}
		c.fresh()
		m.InnerHVP(c.hv, c.y, c.x, c.train, c.gb.Next(), p)
		floats.AddScaledTo(c.tmp, p, -c.p.Lambda, c.hv)
		return c.tmp, nil, optim.KindUpdate
	case stHyper:
		c.hyper(c.in[:dy])
		return c.gx, nil, optim.KindUpdate
	case stUpper:
		c.upper(c.in[:len(c.x)])
		return c.xv, nil, optim.KindModel
	case stLocalUpper:
		copy(c.y, c.in[:dy])
		c.localP()
		c.hyper(c.local)
		c.upper(c.gx)
		return c.xv, nil, optim.KindModel
	}
	panic(fmt.Sprintf("fbo: stage kind %d", st.kind))
}

// gradFy writes ∇_yF_i(x, y) on the batch into dst.
func (c *client) gradFy(dst []float64, idx []int) {
	var gx []float64
	if !takesNil(c.model) {
		gx = c.scratchX()
	}
	c.fresh()
	c.model.OuterGrad(dst, gx, c.y, c.x, c.val, idx)
}

// gradFx writes ∇_xF_i(x, y) on the batch into dst.
func (c *client) gradFx(dst, x []float64, idx []int) {
	var gy []float64
	if !takesNil(c.model) {
		gy = c.tmpY
	}
	c.fresh()
	c.model.OuterGrad(gy, dst, c.y, x, c.val, idx)
}

func (c *client) scratchX() []float64 {
	if c.tmpX == nil {
		c.tmpX = make([]float64, len(c.x))
	}
	return c.tmpX
}

// hyper writes h_i = ∇_xF_i(x, y) − ∇²_xyG_i(x, y)·p into c.gx.
func (c *client) hyper(p []float64) {
	c.gradFx(c.gx, c.x, c.fb.Next())
	c.fresh()
	c.model.InnerCross(c.gx0, c.y, c.x, c.train, c.gb.Next(), p)
	floats.Sub(c.gx, c.gx0)
}

// localP writes LFedNest's local p_i = λ Σ_{n=0}^{T} (I − λ∇²_yyG_i)^n ∇_yF_i
// into c.local (no communication).
func (c *client) localP() {
	lf := c.method.(*LFedNest)
	dy := len(c.y)
	if c.local == nil {
		c.local = make([]float64, dy)
	}
	cur := make([]float64, dy)
	c.gradFy(cur, c.fb.Next())
	copy(c.local, cur)
	for range lf.Neumann {
		c.fresh()
		c.model.InnerHVP(c.hv, c.y, c.x, c.train, c.gb.Next(), cur)
		floats.AddScaled(cur, -c.p.Lambda, c.hv)
		floats.Add(c.local, cur)
	}
	floats.Scale(c.p.Lambda, c.local)
}

// upper runs One-Round-Upper (Alg. 4) from c.x with the global estimate h
// and leaves x_τ in c.xv: h_{i,v} = h − ∇_xF_i(x, y; ξ) + ∇_xF_i(x_v, y; ξ'),
// with ξ' = ξ drawn afresh per step (FedNest, LFedNest; the correction
// vanishes at v = 0) or ξ drawn once and ξ' per step (FBO-AggITD, Sec. 3).
func (c *client) upper(h []float64) {
	h = slices.Clone(h)
	copy(c.xv, c.x)
	var xi, xi2 []int
	if !c.sameBatch {
		xi = batch(nil, c.fb)
		c.gradFx(c.gx0, c.x, xi)
	}
	for v := range c.p.Tau {
		if c.sameBatch {
			if v == 0 {
				floats.AddScaled(c.xv, -c.p.Alpha, h)
				continue
			}
			xi2 = batch(xi2, c.fb)
			c.gradFx(c.gx0, c.x, xi2)
		} else {
			xi2 = batch(xi2, c.fb)
		}
		c.gradFx(c.gx, c.xv, xi2)
		floats.Sub(c.gx, c.gx0)
		floats.Add(c.gx, h)
		floats.AddScaled(c.xv, -c.p.Alpha, c.gx)
	}
}

// takesNil reports whether m's OuterGrad skips a part given nil.
func takesNil(m models.Bilevel[float64]) bool {
	_, ok := m.(models.PartialOuter[float64])
	return ok
}
