package nn

// The float32 group norm's forward statistics, eight groups at once: the
// chains of sum and sumSquaredDeviations in float32, each group's four
// partial sums in a vector and eight groups side by side
// (norm32_lanes_amd64.s), so they give the scalar loops' bits.

import (
	"unsafe"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// rforward8x32 is rforward8 for float32 (F must be float32): Σ rx and
// Σ x̂ rx of groups q..q+7 side by side, then x̂, R{x̂} and ry, as
// rforwardSums and rforward's second sweep do.
func (l *groupNorm[F]) rforward8x32(ry, rx, x, gamma, ug, ub []F, q int) {
	m, pl := l.m, l.plane
	steps, stride := m/16, 4*m
	var scr normScratch32
	var cs, acc [2][8]F
	for j := range laneGroups {
		cs[0][j], cs[1][j] = l.mu[q+j], l.s[q+j]
	}
	if steps > 0 {
		normRFwdSums8x32(&scr[0], stride, steps, ptr32(rx[q*m:]), ptr32(x[q*m:]),
			(*[2][8]float32)(unsafe.Pointer(&cs)), (*[2][8]float32)(unsafe.Pointer(&acc)))
	}
	inv := F(1 / float64(m))
	for j := range laneGroups {
		qq := q + j
		mu, s := cs[0][j], cs[1][j]
		sr, sxr := acc[0][j], acc[1][j]
		for i := qq*m + 16*steps; i < (qq+1)*m; i++ {
			t := rx[i]
			xv := F((x[i] - mu) * s)
			sr += t
			sxr += xv * t
		}
		mr, a := sr*inv, sxr*inv
		l.a[qq] = a
		c0 := l.channels(qq)
		for k := range m / pl {
			o := qq*m + k*pl
			tangentXRun(l.rxhat[o:o+pl], ry[o:o+pl], rx[o:o+pl], x[o:o+pl], l.xhat[o:o+pl],
				mu, s, mr, a, gamma[c0+k], ug[c0+k], ub[c0+k])
		}
	}
}

// normScratch32 holds normRFwdSums8x32's transposed rows: eight of eight
// values for each of two arrays, and room to align them to 32 bytes.
type normScratch32 [2*64 + 8]float32

// normScratch32x4 holds normRBackSums8x32's transposed rows: eight of
// eight values for each of four arrays, and room to align them to 32
// bytes.
type normScratch32x4 [4*64 + 8]float32

// rbackward8x32 is rbackward with rgx for groups q..q+7 (F must be
// float32): the first sweep's sums of eight groups side by side, plane by
// plane (normRBackSums8x32, the loop here finishing each plane's last
// values in the scalar loop's order), then per group gx = P(h) (into
// l.h when gx is nil) and R{gx}, h and R{h} formed again from gy and rgy
// rather than stored and read back.
func (l *groupNorm[F]) rbackward8x32(gx, rgx, rgw, gy, rgy, gamma, ug []F, q int) {
	m, pl, c := l.m, l.plane, l.shape.C
	xh, rxh := l.xhat, l.rxhat
	steps, stride := pl/8, 4*m
	var scr normScratch32x4
	var cs [2][8]F
	var acc [7][8]F // Σ over a plane: rgy x̂ + gy R{x̂}, rgy; over the group: h, x̂ h, R{x̂} h, R{h}, x̂ R{h}
	for k := range m / pl {
		for j := range laneGroups {
			c0 := l.channels(q + j)
			cs[0][j], cs[1][j] = gamma[c0+k], ug[c0+k]
		}
		acc[0], acc[1] = [8]F{}, [8]F{}
		if off := q*m + k*pl; steps > 0 {
			_ = rgy[off+7*m+pl-1] // the kernel's last group
			_ = gy[off+7*m+pl-1]
			_ = xh[off+7*m+pl-1]
			_ = rxh[off+7*m+pl-1]
			normRBackSums8x32(&scr[0], stride, steps, ptr32(rgy[off:]), ptr32(gy[off:]), ptr32(xh[off:]), ptr32(rxh[off:]),
				(*[2][8]float32)(unsafe.Pointer(&cs)), (*[7][8]float32)(unsafe.Pointer(&acc)))
		}
		for j := range laneGroups {
			g, gu := cs[0][j], cs[1][j]
			sg, sb, sh, sxh := acc[0][j], acc[1][j], acc[2][j], acc[3][j]
			srxh, srh, sxrh := acc[4][j], acc[5][j], acc[6][j]
			o := (q+j)*m + k*pl + 8*steps
			rgp := rgy[o : (q+j)*m+(k+1)*pl]
			xp, rp, gp := xh[o:o+len(rgp)], rxh[o:o+len(rgp)], gy[o:o+len(rgp)]
			for i, t := range rgp {
				gv := gp[i]
				sg += t*xp[i] + gv*rp[i]
				sb += t
				hv := g * gv
				rv := g*t + gu*gv
				sh += hv
				sxh += xp[i] * hv
				srxh += rp[i] * hv
				srh += rv
				sxrh += xp[i] * rv
			}
			acc[2][j], acc[3][j], acc[4][j], acc[5][j], acc[6][j] = sh, sxh, srxh, srh, sxrh
			c0 := l.channels(q + j)
			rgw[c0+k] += sg
			rgw[c+c0+k] += sb
		}
	}
	inv := F(1 / float64(m))
	for j := range laneGroups {
		qq := q + j
		c0 := l.channels(qq)
		s := l.s[qq]
		mh, mxh, mrxh, mrh, mxrh := acc[2][j]*inv, acc[3][j]*inv, acc[4][j]*inv, acc[5][j]*inv, acc[6][j]*inv
		sa := s * l.a[qq]
		for k := range m / pl {
			o := qq*m + k*pl
			h := l.h[k*pl : (k+1)*pl]
			if gx != nil {
				h = gx[o : o+pl]
			}
			rprojGRun(h, rgx[o:o+pl], gy[o:o+pl], rgy[o:o+pl], xh[o:o+pl], rxh[o:o+pl],
				gamma[c0+k], ug[c0+k], s, mh, mxh, mrxh, mrh, mxrh, sa)
		}
	}
}

// rprojGRun is rprojRun with h = γ·gy and R{h} = γ·rgy + u_γ·gy formed
// from gy and rgy (g = γ, gu = u_γ) and written to h and rh first.
func rprojGRun[F gemm.Float](h, rh, gy, rgy, xh, rxh []F, g, gu, s, mh, mxh, mrxh, mrh, mxrh, sa F) {
	rh, gy, rgy, xh, rxh = rh[:len(h)], gy[:len(h)], rgy[:len(h)], xh[:len(h)], rxh[:len(h)]
	i := 0
	if q := len(h) / 8; normVector && !vec.Is64[F]() && q > 0 {
		normRProjG32(q, ptr32(h), ptr32(rh), ptr32(gy), ptr32(rgy), ptr32(xh), ptr32(rxh),
			float32(g), float32(gu), float32(s), float32(mh), float32(mxh), float32(mrxh), float32(mrh), float32(mxrh), float32(sa))
		i = 8 * q
	}
	for k, t := range rgy[i:] {
		gv := gy[i+k]
		h[i+k], rh[i+k] = g*gv, g*t+gu*gv
	}
	rprojScalar(h[i:], rh[i:], xh[i:], rxh[i:], s, mh, mxh, mrxh, mrh, mxrh, sa)
}
