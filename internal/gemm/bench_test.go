package gemm

// Measured with BenchmarkInterleaved (-cpu 1 -benchtime 20x, fastest of 60
// calls each) on the project's machine: AMD EPYC Zen 4 at 3.67 GHz, two
// vCPUs shared with other jobs (load average 2.6–2.9 during the run).
// Unfused multiply-then-add peaks at 16 flops a cycle, 58.7 GFLOP/s.
// Columns: the dispatched kernel's GFLOP/s (AVX2; DotNT in 4 × 4 tiles on
// AVX-512VL), its speed-up over the reference loop and over gonum's
// blas64.Gemm (pure Go, one goroutine), and the pure-Go fallback's GFLOP/s
// (and its speed-up over the reference loop). Between runs the kernels
// moved by up to 8 %, the reference loops and gonum by up to 25 % (AccTN's
// reference loop by 50 %). DotNT's AVX2-only 3 × 3 tiles run at 38–42.
//
//	kernel m×n×k              GFLOP/s  ref  gonum  pure Go
//	AccNN 64x121x576          46.2   12.7×   4.5×    5.8 (1.6×)
//	AccNN 128x64x10           45.6   13.0×   4.7×    5.5 (1.6×)
//	AccNN 512x256x784         50.1   14.4×   6.1×    5.5 (1.6×)
//	AccNN 1936x64x576         48.3   13.7×   5.3×    5.5 (1.6×)
//	AccNT 10x784x128          35.0   14.5×   4.3×    5.2 (2.2×)
//	AccNT 128x64x784          50.0   20.8×   5.1×    5.3 (2.2×)
//	AccNT 128x784x64          49.0   20.6×   5.3×    5.2 (2.2×)
//	AccNT 512x256x784         50.5   21.4×   7.0×    5.1 (2.2×)
//	AccNT 1936x576x64         49.1   20.9×   5.5×    5.1 (2.2×)
//	AccTN 10x784x128          40.8    7.5×   4.6×    6.0 (1.1×)
//	AccTN 64x784x128          49.4    9.2×   6.8×    5.7 (1.1×)
//	AccTN 512x256x784         46.6    9.2×   5.9×    5.4 (1.1×)
//	DotNT 128x10x784          46.1    8.6×   4.7×    5.5 (1.0×)
//	DotNT 128x64x784          49.2    9.1×   5.0×    5.5 (1.0×)
//	DotNT 512x256x784         47.5    8.9×   6.6×    5.3 (1.0×)
//	DotNT 1936x64x576         45.1    8.5×   6.3×    5.3 (1.0×)
//
// float32 and float64 in one run (-cpu 1 -benchtime 20x, fastest call) on
// Zen 5 (AMD EPYC, family 26) with the 512-bit kernels: GFLOP/s of the
// dispatched kernels, their ratio, and float32 against OpenBLAS's
// one-thread SGEMM on 1024³ (PyTorch 1.13 torch.mm, fastest of 60 calls,
// measured right after: 236 GFLOP/s; DGEMM 101). The 256-bit float32
// kernels (HGPSIM_NOAVX512=1) run at 91–129, the pure-Go ones at 5–8.
//
//	kernel m×n×k          float64  float32  ratio  of SGEMM
//	DotNT 128x64x784         90.1    226.8   2.52     96 %
//	DotNT 128x10x784         79.5    212.5   2.67     90 %
//	DotNT 1936x64x576        85.6    211.8   2.47     90 %
//	DotNT 512x256x784        88.9    226.7   2.55     96 %
//	AccNN 128x64x10          96.3    170.5   1.77     72 %
//	AccNN 1936x64x576       117.7    242.1   2.06    102 %
//	AccNN 512x256x784       118.9    241.4   2.03    102 %
//	AccNN 64x121x576         97.8    175.3   1.79     74 %
//	AccTN 64x784x128        115.7    239.9   2.07    101 %
//	AccTN 10x784x128        108.9    220.2   2.02     93 %
//	AccTN 512x256x784       107.8    221.1   2.05     94 %
//	AccNT 128x784x64        111.0    223.5   2.01     95 %
//	AccNT 128x64x784        112.2    232.1   2.07     98 %
//	AccNT 512x256x784       118.5    240.4   2.03    102 %
//	AccNT 10x784x128         65.7    114.6   1.74     48 %
//	AccNT 1936x576x64       119.6    243.5   2.04    103 %

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// benchShapes are the products of the models: the MLP 784-64-10 at batch
// 128 (forward, weight gradients, softmax layer), an eighth of the im2col
// convolution 15488 × 576 × 64 at batch 128 (and its input gradient), a
// width that is not a multiple of four, few rows against a wide operand,
// a larger square-ish product, and norm-16-32's first weight gradient in
// dot order per sample (as the convolutions run it) and over a batch of
// 128 in one product (long k: its rows stream from L3), and FedEM's CNN's
// dense layer 1024 → 2048 at batch 128 (forward and input gradient).
var benchShapes = []struct {
	kernel  string
	m, n, k int
}{
	{"DotNT", 128, 64, 784},
	{"DotNT", 128, 10, 784},
	{"DotNT", 1936, 64, 576},
	{"DotNT", 512, 256, 784},
	{"DotNT", 128, 2048, 1024},
	{"DotNT", 16, 25, 576},
	{"DotNT", 16, 25, 73728},
	{"AccNN", 128, 64, 10},
	{"AccNN", 1936, 64, 576},
	{"AccNN", 512, 256, 784},
	{"AccNN", 64, 121, 576},
	{"AccTN", 64, 784, 128},
	{"AccTN", 10, 784, 128},
	{"AccTN", 512, 256, 784},
	{"AccTN", 1024, 128, 2048},
	{"AccNT", 128, 784, 64},
	{"AccNT", 128, 64, 784},
	{"AccNT", 512, 256, 784},
	{"AccNT", 10, 784, 128},
	{"AccNT", 1936, 576, 64},
}

// benchCase is one kernel on one shape: its operands bound into a call
// per way to compute it (the reference loop, this package's
// implementations, gonum).
type benchCase struct {
	name  string
	flops float64
	impls []benchImpl
}

type benchImpl struct {
	name string
	run  func()
}

// benchCases returns the float64 cases, then the float32 ones (named
// "f32/…").
func benchCases() []benchCase {
	return append(benchCasesOf[float64](""), benchCasesOf[float32]("f32/")...)
}

func benchCasesOf[F Float](prefix string) []benchCase {
	r := rand.New(rand.NewPCG(1, 1))
	var cases []benchCase
	for _, s := range benchShapes {
		var kd kind[F]
		for _, x := range kindsOf[F]() {
			if x.name == s.kernel {
				kd = x
			}
		}
		f := filler[F]{r, false}
		ar, ac := kd.aShape(s.m, s.n, s.k)
		br, bc := kd.bShape(s.m, s.n, s.k)
		a, lda := f.matrix(ar, ac, 0)
		bm, ldb := f.matrix(br, bc, 0)
		c, ldc := f.matrix(s.m, s.n, 0)
		clear(c)
		impls := append([]impl[F]{{"ref", kd.ref}}, kd.impls...)
		impls = append(impls, impl[F]{"gonum", gonumGemm[F](kd.name)})
		m, n, k := s.m, s.n, s.k
		cs := benchCase{
			name:  fmt.Sprintf("%s%s/%dx%dx%d", prefix, s.kernel, m, n, k),
			flops: 2 * float64(m) * float64(n) * float64(k),
		}
		for _, im := range impls {
			cs.impls = append(cs.impls, benchImpl{im.name, func() { im.f(m, n, k, a, lda, bm, ldb, c, ldc) }})
		}
		cases = append(cases, cs)
	}
	return cases
}

// BenchmarkKernels times each kernel's implementations, the reference loop
// and gonum's blas64.Gemm on the same product, one after the other (run
// with -cpu 1: gonum's Dgemm starts goroutines when GOMAXPROCS allows).
func BenchmarkKernels(b *testing.B) {
	for _, bc := range benchCases() {
		for _, im := range bc.impls {
			b.Run(bc.name+"/"+im.name, func(b *testing.B) {
				for b.Loop() {
					im.run()
				}
				b.ReportMetric(bc.flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkInterleaved measures the same products as BenchmarkKernels, but
// all of them in turns within one benchmark, each from its fastest call
// (see interleave): on a shared machine its ratios are the ones to trust.
// Run with -benchtime 20x or so.
func BenchmarkInterleaved(b *testing.B) {
	var vs []variant
	for _, bc := range benchCases() {
		for _, im := range bc.impls {
			vs = append(vs, variant{bc.name + "/" + im.name, bc.flops, im.run})
		}
	}
	interleave(b, vs)
}

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

// gonumGemm returns the kernel computed by blas64.Gemm or, in float32,
// blas32.Gemm (their own summation order: the speed comparison only).
func gonumGemm[F Float](name string) kernelOf[F] {
	ta, tb, beta := blas.NoTrans, blas.NoTrans, 1.0
	switch name {
	case "DotNT":
		tb, beta = blas.Trans, 0
	case "AccTN":
		ta = blas.Trans
	case "AccNT":
		tb = blas.Trans
	}
	return func(m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
		ar, ac := m, k
		if ta == blas.Trans {
			ar, ac = k, m
		}
		br, bc := k, n
		if tb == blas.Trans {
			br, bc = n, k
		}
		switch a := any(a).(type) {
		case []float64:
			blas64.Gemm(ta, tb, 1,
				blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
				blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float64)},
				beta, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: any(c).([]float64)})
		case []float32:
			blas32.Gemm(ta, tb, 1,
				blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
				blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float32)},
				float32(beta), blas32.General{Rows: m, Cols: n, Stride: ldc, Data: any(c).([]float32)})
		}
	}
}
