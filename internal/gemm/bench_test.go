package gemm

// RATIOS (filled in after measuring)

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// benchShapes are the products of the models: the MLP 784-64-10 at batch
// 128 (forward, weight gradients, softmax layer), an eighth of the im2col
// convolution 15488 × 576 × 64 at batch 128, and a larger square-ish one.
var benchShapes = []struct {
	kernel  string
	m, n, k int
}{
	{"DotNT", 128, 64, 784},
	{"DotNT", 128, 10, 784},
	{"DotNT", 1936, 64, 576},
	{"DotNT", 512, 256, 784},
	{"AccNN", 128, 64, 10},
	{"AccNN", 1936, 64, 576},
	{"AccNN", 512, 256, 784},
	{"AccTN", 64, 784, 128},
	{"AccTN", 10, 784, 128},
	{"AccTN", 512, 256, 784},
	{"AccNT", 128, 784, 64},
	{"AccNT", 128, 64, 784},
	{"AccNT", 512, 256, 784},
}

// BenchmarkKernels times each kernel's AVX2 and pure-Go implementations,
// the reference loop and gonum's blas64.Gemm on the same product (run with
// -cpu 1: gonum's Dgemm starts goroutines when GOMAXPROCS allows).
func BenchmarkKernels(b *testing.B) {
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
		for i := range c {
			c[i] = 0
		}
		impls := append([]impl{{"ref", kd.ref}}, kd.impls...)
		impls = append(impls, impl{"gonum", gonumGemm(kd.name)})
		flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		for _, im := range impls {
			b.Run(fmt.Sprintf("%s/%dx%dx%d/%s", s.kernel, s.m, s.n, s.k, im.name), func(b *testing.B) {
				for b.Loop() {
					im.f(s.m, s.n, s.k, a, lda, bm, ldb, c, ldc)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// gonumGemm returns the kernel computed by blas64.Gemm (its own summation
// order: the speed comparison only).
func gonumGemm(name string) kernel {
	ta, tb, beta := blas.NoTrans, blas.NoTrans, 1.0
	switch name {
	case "DotNT":
		tb, beta = blas.Trans, 0
	case "AccTN":
		ta = blas.Trans
	case "AccNT":
		tb = blas.Trans
	}
	return func(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
		ar, ac := m, k
		if ta == blas.Trans {
			ar, ac = k, m
		}
		br, bc := k, n
		if tb == blas.Trans {
			br, bc = n, k
		}
		blas64.Gemm(ta, tb, 1,
			blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
			blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
			beta, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: c})
	}
}
