package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/internal/gemm"
)

// refNorm is the group norm's passes as plain loops over one group at a
// time, each value formed once and kept: the operations and orders the
// layer must reproduce bit for bit.
type refNorm struct {
	c, g, m, plane int
	xhat, rxhat    []float64
	s, a           []float64
}

func (l *refNorm) forward(y, x, w []float64, n int) {
	inv := 1 / float64(l.m)
	for q := range n * l.g {
		off, c0 := q*l.m, (q%l.g)*(l.c/l.g)
		xq := x[off : off+l.m]
		mu := sum(xq) * inv
		s := 1 / math.Sqrt(sumSquaredDeviations(xq, mu)*inv+normEps)
		l.s[q] = s
		for i, t := range xq {
			t = (t - mu) * s
			l.xhat[off+i] = t
			y[off+i] = w[c0+i/l.plane]*t + w[l.c+c0+i/l.plane]
		}
	}
}

func (l *refNorm) backward(gx, gw, gy, w []float64, n int) {
	inv := 1 / float64(l.m)
	for q := range n * l.g {
		off, c0 := q*l.m, (q%l.g)*(l.c/l.g)
		h := make([]float64, l.m)
		var sh, sxh float64
		for k := range l.m / l.plane {
			var sg, sb float64
			for i := k * l.plane; i < (k+1)*l.plane; i++ {
				t, xh := gy[off+i], l.xhat[off+i]
				sg += t * xh
				sb += t
				h[i] = w[c0+k] * t
				sh += h[i]
				sxh += xh * h[i]
			}
			gw[c0+k] += sg
			gw[l.c+c0+k] += sb
		}
		if gx != nil {
			for i, v := range h {
				gx[off+i] = l.s[q] * (v - sh*inv - l.xhat[off+i]*(sxh*inv))
			}
		}
	}
}

func (l *refNorm) rforward(ry, rx, w, u []float64, n int) {
	inv := 1 / float64(l.m)
	for q := range n * l.g {
		off, c0 := q*l.m, (q%l.g)*(l.c/l.g)
		var sr, sxr float64
		for i := range l.m {
			sr += rx[off+i]
			sxr += l.xhat[off+i] * rx[off+i]
		}
		s, mr, a := l.s[q], sr*inv, sxr*inv
		l.a[q] = a
		for i := range l.m {
			k, xh := c0+i/l.plane, l.xhat[off+i]
			r := s * (rx[off+i] - mr - xh*a)
			l.rxhat[off+i] = r
			ry[off+i] = w[k]*r + u[k]*xh + u[l.c+k]
		}
	}
}

func (l *refNorm) rbackward(gx, rgx, rgw, gy, rgy, w, u []float64, n int) {
	inv := 1 / float64(l.m)
	for q := range n * l.g {
		off, c0 := q*l.m, (q%l.g)*(l.c/l.g)
		h, rh := make([]float64, l.m), make([]float64, l.m)
		var sh, sxh, srxh, srh, sxrh float64
		for k := range l.m / l.plane {
			var sg, sb float64
			for i := k * l.plane; i < (k+1)*l.plane; i++ {
				t, gv, xh, rxh := rgy[off+i], gy[off+i], l.xhat[off+i], l.rxhat[off+i]
				sg += t*xh + gv*rxh
				sb += t
				h[i], rh[i] = w[c0+k]*gv, w[c0+k]*t+u[c0+k]*gv
				sh += h[i]
				sxh += xh * h[i]
				srxh += rxh * h[i]
				srh += rh[i]
				sxrh += xh * rh[i]
			}
			rgw[c0+k] += sg
			rgw[l.c+c0+k] += sb
		}
		s := l.s[q]
		sa := s * l.a[q]
		for i, hv := range h {
			xh, rxh := l.xhat[off+i], l.rxhat[off+i]
			g := s * (hv - sh*inv - xh*(sxh*inv))
			rgx[off+i] = s*(rh[i]-srh*inv-xh*(sxrh*inv)) - sa*g - s*(rxh*(sxh*inv)+xh*(srxh*inv))
			if gx != nil {
				gx[off+i] = g
			}
		}
	}
}

// The group norm's passes give the plain loops' bits: groups of several
// channels, planes and group counts that are not multiples of four, and
// odd numbers of groups in a batch (the paired sweeps' single last group).
func TestGroupNormMatchesPlainLoops(t *testing.T) {
	for _, c := range []struct {
		in    Shape
		g, n  int
		gxNil bool
	}{
		{Shape{4, 5, 3}, 2, 3, false},
		{Shape{6, 4, 4}, 3, 1, false},
		{Shape{16, 6, 6}, 1, 4, true},
		{Shape{3, 7, 1}, 3, 2, true},
		// Eight groups at a time and the groups after them: several
		// groups per sample, runs not multiples of four, fewer than four.
		{Shape{4, 5, 3}, 2, 11, false},
		{Shape{6, 4, 4}, 3, 5, false},
		{Shape{16, 6, 6}, 1, 9, true},
		{Shape{3, 7, 1}, 3, 8, true},
		{Shape{2, 3, 1}, 2, 13, false},
		{Shape{8, 24, 24}, 1, 17, false},
	} {
		checkGroupNormMatchesPlain(t, c.in, c.g, c.n, c.gxNil, randVec)
	}
}

// The eight-group kernels give the plain loops' bits on signed zeros,
// subnormals and large values too (large enough that the sums round
// heavily, small enough that the variance stays finite).
func TestGroupNormLanesSpecialValues(t *testing.T) {
	special := func(r *rand.Rand, n int, _ float64) []float64 {
		v := normValues(r, n)
		for i := range v {
			if math.Abs(v[i]) > 1e200 {
				v[i] *= 1e-150
			}
		}
		return v
	}
	for _, c := range []struct {
		in   Shape
		g, n int
	}{
		{Shape{4, 5, 3}, 2, 11},
		{Shape{16, 6, 6}, 1, 9},
		{Shape{8, 24, 24}, 1, 8},
	} {
		checkGroupNormMatchesPlain(t, c.in, c.g, c.n, false, special)
	}
}

// testGroupNorm returns a group norm of g groups on in, reserved for a
// batch of n.
func testGroupNorm[F gemm.Float](t *testing.T, in Shape, g, n int) *groupNorm[F] {
	t.Helper()
	ly, err := newGroupNorm[F](GroupNorm(g), in)
	if err != nil {
		t.Fatal(err)
	}
	l := ly.(*groupNorm[F])
	l.reserve(n)
	return l
}

// checkGroupNormMatchesPlain runs every pass of a group norm of g groups
// and of refNorm on a batch of n inputs of shape in, values from gen, and
// fails unless they give the same bits.
func checkGroupNormMatchesPlain(t *testing.T, in Shape, g, n int, gxNil bool, gen func(*rand.Rand, int, float64) []float64) {
	t.Helper()
	l := testGroupNorm[float64](t, in, g, n)
	size, ng := n*in.Size(), n*g
	ref := &refNorm{c: in.C, g: g, m: l.m, plane: l.plane,
		xhat: make([]float64, size), rxhat: make([]float64, size), s: make([]float64, ng), a: make([]float64, ng)}
	r := rand.New(rand.NewPCG(11, uint64(n)))
	x, rx, gy, rgy := gen(r, size, 1), gen(r, size, 1), gen(r, size, 1), gen(r, size, 1)
	w, u := gen(r, 2*in.C, 1), gen(r, 2*in.C, 1)
	y1, y2 := make([]float64, size), make([]float64, size)
	l.forward(y1, x, w, n)
	ref.forward(y2, x, w, n)
	sameBitsOrFail(t, "forward", size, y1, y2)

	gx1, gx2 := make([]float64, size), make([]float64, size)
	gw1, gw2 := gen(r, 2*in.C, 1), make([]float64, 2*in.C)
	copy(gw2, gw1)
	for _, nilGx := range []bool{false, true} {
		if nilGx {
			gx1, gx2 = nil, nil
		}
		l.backward(gx1, gw1, gy, x, y1, w, n)
		ref.backward(gx2, gw2, gy, w, n)
		sameBitsOrFail(t, "backward gx", size, gx1, gx2)
		sameBitsOrFail(t, "backward gw", size, gw1, gw2)
	}

	l.rforward(y1, rx, x, y1, w, u, n)
	ref.rforward(y2, rx, w, u, n)
	sameBitsOrFail(t, "rforward", size, y1, y2)

	gx1, gx2 = make([]float64, size), make([]float64, size)
	rgx1, rgx2 := make([]float64, size), make([]float64, size)
	if gxNil {
		gx1, gx2 = nil, nil
	}
	l.rbackward(gx1, rgx1, gw1, gy, rgy, x, rx, y1, y1, w, u, n)
	ref.rbackward(gx2, rgx2, gw2, gy, rgy, w, u, n)
	sameBitsOrFail(t, "rbackward gx", size, gx1, gx2)
	sameBitsOrFail(t, "rbackward rgx", size, rgx1, rgx2)
	sameBitsOrFail(t, "rbackward rgw", size, gw1, gw2)
}
