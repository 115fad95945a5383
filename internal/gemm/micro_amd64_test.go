package gemm

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// BenchmarkMicrokernel runs the microkernels alone on operands that stay
// in L1: the ceiling of the blocked kernels. Zen 4 at 3.67 GHz peaks at 16
// flops a cycle (two 4-lane multiplies and two 4-lane adds), 58.7 GFLOP/s.
func BenchmarkMicrokernel(b *testing.B) {
	if !cpu.X86.HasAVX2 {
		b.Skip("no AVX2")
	}
	const kc, reps = 256, 20
	a := make([]float64, 6*(kc+8))
	bm := make([]float64, kc*8+64)
	c := make([]float64, 6*8)
	var out [16]float64
	vs := []variant{
		{"acc6x8", reps * 2 * 6 * 8 * kc, func() {
			for range reps {
				accKern6x8(1, kc, &a[0], kc+8, 1, &bm[0], 8, 0, &c[0], 8)
			}
		}},
		{"dot3x3", reps * 2 * 3 * 3 * kc, func() {
			for range reps {
				dotKern3x3(1, kc, &a[0], kc+8, &bm[0], kc+8, &out[0], 4)
			}
		}},
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		vs = append(vs, variant{"dotX4x4", reps * 2 * 4 * 4 * kc, func() {
			for range reps {
				dotKernX4x4(1, kc, &a[0], kc+8, &bm[0], kc+8, &out[0], 4)
			}
		}})
	}
	interleave(b, vs)
}
