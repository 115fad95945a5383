package nn

// The group norm's running sums, eight groups at once. Each sum of a group
// is one chain of additions in a fixed order (the scalar loops of norm.go);
// alone, a chain waits on every addition. The kernels of norm_lanes_amd64.s
// run the chains of eight groups side by side, group j in lane j, each in
// its own order, so they give the scalar loops' bits. They cover each run
// of values four (forward statistics) or eight at a time; the loops here
// finish the last values of every group and use the sums. float32 has its
// own (norm32_lanes.go) for the forward statistics and both tangent
// passes; its backward runs group by group.
//
// float64's rbackward keeps its per-group loop: its sums read four arrays,
// and eight groups of them (2.3 MB in norm-16-32) outgrow the L2 cache its
// second sweep reads them back from; side by side it measured no faster.
// In float32 (half the bytes, and a second sweep that forms h and R{h}
// again instead of reading them back) it measured a third faster.

import (
	"math"
	"unsafe"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// normScratch holds the transposing kernels' rows: eight of eight values
// for each of two arrays, and room to align them to 64 bytes.
type normScratch [2*64 + 8]float64

// laneGroups is the number of groups the kernels sum side by side.
const laneGroups = 8

// stats8 sets μ and s of groups q..q+7 of x as forwardPlanes' scalar
// loop does (sum, then sumSquaredDeviations), eight groups at once: each
// group's four partial sums in F, one lane of the kernels each.
func (l *groupNorm[F]) stats8(x []F, q int) {
	m := l.m
	steps, stride := m/4, int(vec.ElemSize[F]())*m
	inv := F(1 / float64(m))
	var acc, mu [8][4]F
	if steps > 0 {
		if vec.Is64[F]() {
			normSum8(stride, steps, ptr64(x[q*m:]), (*[8][4]float64)(unsafe.Pointer(&acc)))
		} else {
			normSum8x32(stride, steps, ptr32(x[q*m:]), (*[8][4]float32)(unsafe.Pointer(&acc)))
		}
	}
	for j := range laneGroups {
		s0, s1, s2, s3 := acc[j][0], acc[j][1], acc[j][2], acc[j][3]
		for _, t := range x[(q+j)*m+4*steps : (q+j+1)*m] {
			s0 += t
		}
		v := ((s0 + s1) + (s2 + s3)) * inv
		mu[j] = [4]F{v, v, v, v}
		acc[j] = [4]F{}
	}
	if steps > 0 {
		if vec.Is64[F]() {
			normSqDev8(stride, steps, ptr64(x[q*m:]), (*[8][4]float64)(unsafe.Pointer(&mu)), (*[8][4]float64)(unsafe.Pointer(&acc)))
		} else {
			normSqDev8x32(stride, steps, ptr32(x[q*m:]), (*[8][4]float32)(unsafe.Pointer(&mu)), (*[8][4]float32)(unsafe.Pointer(&acc)))
		}
	}
	for j := range laneGroups {
		v := mu[j][0]
		s0, s1, s2, s3 := acc[j][0], acc[j][1], acc[j][2], acc[j][3]
		for _, t := range x[(q+j)*m+4*steps : (q+j+1)*m] {
			d := t - v
			s0 += d * d
		}
		ss := (s0 + s1) + (s2 + s3)
		l.mu[q+j] = v
		l.s[q+j] = F(1 / math.Sqrt(float64(ss*inv+normEps)))
	}
}

// backward8 is backward's first sweep for groups q..q+7 (the affine
// gradients into gw) and, with gx, its second (gx = P(γ ⊙ gy)); gy holds
// the eight groups' output gradients.
func (l *groupNorm[F]) backward8(gx, gw, gy, x, gamma []F, q int) {
	m, pl, c := l.m, l.plane, l.shape.C
	steps, stride := pl/8, 8*m
	var scr normScratch
	var cs [3][8]float64
	var acc [4][8]float64 // Σ gy x̂, Σ gy per channel; Σ h, Σ x̂ h per group
	for j := range laneGroups {
		cs[0][j], cs[1][j] = float64(l.mu[q+j]), float64(l.s[q+j])
	}
	for k := range m / pl {
		for j := range laneGroups {
			cs[2][j] = float64(gamma[l.channels(q+j)+k])
		}
		acc[0], acc[1] = [8]float64{}, [8]float64{}
		if off := k * pl; steps > 0 {
			_ = gy[off+7*m+pl-1] // the kernel's last group
			normBackSums8(&scr[0], stride, steps, ptr64(gy[off:]), ptr64(x[q*m+off:]), &cs, &acc)
		}
		for j := range laneGroups {
			mu, s, g := cs[0][j], cs[1][j], cs[2][j]
			sg, sb, sh, sxh := acc[0][j], acc[1][j], acc[2][j], acc[3][j]
			o := (q+j)*m + k*pl
			for i := o + 8*steps; i < o+pl; i++ {
				t := float64(gy[i-q*m])
				xv := (float64(x[i]) - mu) * s
				sg += t * xv
				sb += t
				v := g * t
				sh += v
				sxh += xv * v
			}
			acc[2][j], acc[3][j] = sh, sxh
			c0 := l.channels(q + j)
			gw[c0+k] += F(sg)
			gw[c+c0+k] += F(sb)
		}
	}
	if gx == nil {
		return
	}
	inv := 1 / float64(m)
	for j := range laneGroups {
		qq := q + j
		c0 := l.channels(qq)
		mu, s := l.mu[qq], l.s[qq]
		mh, mxh := F(acc[2][j]*inv), F(acc[3][j]*inv)
		for k := range m / pl {
			o := qq*m + k*pl
			projGRun(gx[o:o+pl], gy[o-q*m:o-q*m+pl], x[o:o+pl], mu, s, gamma[c0+k], mh, mxh)
		}
	}
}

// rforward8 is rforward for groups q..q+7 with rx: Σ rx and Σ x̂ rx of
// each group, then x̂, R{x̂} and ry.
func (l *groupNorm[F]) rforward8(ry, rx, x, gamma, ug, ub []F, q int) {
	m, pl := l.m, l.plane
	steps, stride := m/8, 8*m
	var scr normScratch
	var cs, acc [2][8]float64
	for j := range laneGroups {
		cs[0][j], cs[1][j] = float64(l.mu[q+j]), float64(l.s[q+j])
	}
	if steps > 0 {
		normRFwdSums8(&scr[0], stride, steps, ptr64(rx[q*m:]), ptr64(x[q*m:]), &cs, &acc)
	}
	inv := 1 / float64(m)
	for j := range laneGroups {
		qq := q + j
		mu, s := cs[0][j], cs[1][j]
		sr, sxr := acc[0][j], acc[1][j]
		for i := qq*m + 8*steps; i < (qq+1)*m; i++ {
			t := float64(rx[i])
			xv := (float64(x[i]) - mu) * s
			sr += t
			sxr += xv * t
		}
		mr, a := F(sr*inv), F(sxr*inv)
		l.a[qq] = a
		c0 := l.channels(qq)
		for k := range m / pl {
			o := qq*m + k*pl
			tangentXRun(l.rxhat[o:o+pl], ry[o:o+pl], rx[o:o+pl], x[o:o+pl], l.xhat[o:o+pl],
				F(mu), F(s), mr, a, gamma[c0+k], ug[c0+k], ub[c0+k])
		}
	}
}

// lanes reports whether passes over n·g groups of F run eight groups at a
// time: float64 with the 512-bit kernels.
func lanes[F gemm.Float]() bool { return normLanes && vec.Is64[F]() }
