package gemm

// BenchmarkInterleaved's figures, with the processor and the load of the
// run and OpenBLAS's for comparison, are in docs/performance.md (Matrix
// products): one table per processor, replaced when the kernels change.

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
