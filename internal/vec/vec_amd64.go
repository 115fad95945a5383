package vec

import (
	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/floats"
)

// hasAVX2 selects the four-lane kernel; the environment variable
// HGPSIM_NOAVX2=1 turns it off (to measure it, or to rule it out).
var hasAVX2 = cpu.X86.HasAVX2 && !noAVX2()

// axpyAVX2 sets y[i] += alpha·x[i] with separate VMULPD and VADDPD.
//
//go:noescape
func axpyAVX2(alpha float64, x, y []float64)

func addScaled(dst []float64, alpha float64, s []float64) {
	if hasAVX2 {
		axpyAVX2(alpha, s, dst)
		return
	}
	floats.AddScaled(dst, alpha, s)
}
