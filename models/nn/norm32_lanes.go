package nn

// The float32 group norm's forward statistics, eight groups at once: the
// chains of sum and sumSquaredDeviations in float32, each group's four
// partial sums in a vector and eight groups side by side
// (norm32_lanes_amd64.s), so they give the scalar loops' bits.

import (
	"math"
	"unsafe"
)

// stats8x32 is stats8 for float32 (F must be float32): it sets μ and s of
// groups q..q+7 of x as forwardPlanes' scalar loop does.
func (l *groupNorm[F]) stats8x32(x []F, q int) {
	m := l.m
	steps, stride := m/4, 4*m
	inv := F(1 / float64(m))
	var acc, mu [8][4]F
	acc32 := (*[8][4]float32)(unsafe.Pointer(&acc))
	if steps > 0 {
		normSum8x32(stride, steps, ptr32(x[q*m:]), acc32)
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
		normSqDev8x32(stride, steps, ptr32(x[q*m:]), (*[8][4]float32)(unsafe.Pointer(&mu)), acc32)
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
