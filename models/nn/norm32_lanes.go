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
