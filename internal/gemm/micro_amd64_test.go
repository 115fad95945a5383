package gemm

import (
	"math/rand/v2"
	"testing"
	"time"
)

type variant struct {
	name  string
	flops float64
	f     func()
}

// interleave runs the variants in turns and reports each one's GFLOP/s
// from its fastest call: on a shared machine the fastest call is the one
// no other process interrupted, so ratios of these figures stay fair.
func interleave(b *testing.B, variants []variant) {
	best := make([]time.Duration, len(variants))
	for v := range best {
		best[v] = time.Hour
	}
	for b.Loop() {
		for v, x := range variants {
			// Three calls a turn: the later ones find the operands in
			// cache, as the previous call left them.
			for range 3 {
				t := time.Now()
				x.f()
				best[v] = min(best[v], time.Since(t))
			}
		}
	}
	for v, x := range variants {
		b.ReportMetric(x.flops/best[v].Seconds()/1e9, x.name+"-GFLOP/s")
	}
}

// BenchmarkMicrokernel runs the microkernels on operands that stay in L1,
// the ceiling of the blocked kernels (two multiplies and two adds of four
// lanes a cycle would be 16 flops a cycle), beside whole products.
func BenchmarkMicrokernel(b *testing.B) {
	const kc = 256
	a := make([]float64, 6*(kc+8))
	bm := make([]float64, kc*8+64)
	c := make([]float64, 6*8)
	var lanes [64]float64
	const reps = 20
	vs := []variant{
		{"acc6x8", reps * 2 * 6 * 8 * kc, func() {
			for range reps {
				accKern6x8(kc, &a[0], kc+8, 1, &bm[0], 8, &c[0], 8)
			}
		}},
		{"dot3x3", reps * 2 * 3 * 3 * kc, func() {
			for range reps {
				dotKern3x3(kc/4, &a[0], kc+8, &bm[0], kc+8, &lanes[0])
			}
		}},
		{"dotX4x4", reps * 2 * 4 * 4 * kc, func() {
			for range reps {
				dotKernX4x4(kc/4, &a[0], kc+8, &bm[0], kc+8, &lanes[0])
			}
		}},
	}
	r := rand.New(rand.NewPCG(1, 1))
	for _, s := range benchShapes {
		var kd kind
		for _, x := range kinds {
			if x.name == s.kernel {
				kd = x
			}
		}
		f := filler{r, false}
		ar, ac := kd.aShape(s.m, s.n, s.k)
		br, bc := kd.bShape(s.m, s.n, s.k)
		a, lda := f.matrix(ar, ac, 0)
		bm, ldb := f.matrix(br, bc, 0)
		c, ldc := f.matrix(s.m, s.n, 0)
		clear(c)
		for _, im := range kd.impls[1:] {
			vs = append(vs, variant{kd.name + "/" + itoa3(s.m, s.n, s.k) + "/" + im.name, 2 * float64(s.m) * float64(s.n) * float64(s.k),
				func() { im.f(s.m, s.n, s.k, a, lda, bm, ldb, c, ldc) }})
		}
	}
	interleave(b, vs)
}

func itoa3(m, n, k int) string {
	return fmtInt(m) + "x" + fmtInt(n) + "x" + fmtInt(k)
}

func fmtInt(x int) string {
	if x < 10 {
		return string(rune('0' + x))
	}
	return fmtInt(x/10) + string(rune('0'+x%10))
}
