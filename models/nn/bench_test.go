package nn

import (
	"math/rand/v2"
	"testing"

	"hgpsim/internal/gemm"
)

// PyTorch 1.13, float64, one thread, OpenBLAS, batch 128 on 1×28×28 with
// 10 classes, cross-entropy (../shared/notes/kernels.md): milliseconds per
// gradient and per Hessian-vector product.
var torchMS = map[string][2]float64{
	"fedem-cnn":    {213, 565},
	"fedbio-4conv": {321, 952},
	"norm-16-32":   {50, 192},
}

// BenchmarkPresets times Grad and HVP of each preset at batch 128 and
// reports milliseconds (wall and CPU), GFLOP/s (counting 3 forward passes per gradient,
// as the PyTorch figures do; the HVP's figure uses the same count, so it
// reads as gradients' worth of work per second) and PyTorch's time. The
// float64 nets run as name/op, the float32 ones as name/f32/op, on the
// same values rounded.
func BenchmarkPresets(b *testing.B) {
	for _, c := range []struct {
		name string
		in   Shape
	}{
		{"fedem-cnn", Shape{1, 28, 28}},
		{"fedbio-4conv", Shape{1, 28, 28}},
		{"node-weighting", Shape{1, 28, 28}},
		{"norm-16-32", Shape{1, 28, 28}},
		{"lenet", Shape{3, 32, 32}},
	} {
		const classes = 10
		specs, err := Preset(c.name, c.in, classes)
		if c.name == "norm-16-32" {
			specs, err = normNet(classes), nil
		}
		if err != nil {
			b.Fatal(err)
		}
		benchPreset[float64](b, c.name, c.in, specs)
		benchPreset[float32](b, c.name+"/f32", c.in, specs)
	}
}

// benchPreset runs BenchmarkPresets' cases for a Net[F] of specs, named
// name/op.
func benchPreset[F gemm.Float](b *testing.B, name string, in Shape, specs []Spec) {
	const n, classes = 128, 10
	net, err := New[F](in, specs, classes)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]F, net.Dim())
	net.Init(x, r)
	u := convert[F](randVec(r, net.Dim(), 0.01))
	a := convert[F](randVec(r, n*in.Size(), 1))
	labels := make([]int, n)
	for i := range labels {
		labels[i] = r.IntN(classes)
	}
	dst := make([]F, net.Dim())
	work := 3 * float64(net.FLOPs()) * n
	// "hvp-again": one more Hessian-vector product at the same point,
	// as hyper-gradient solvers do: JVP and VJPR after one Logits, the
	// backpropagation of G reused. "logits" and "jvp" time the forward
	// pass and its tangent alone.
	z, v := make([]F, n*classes), make([]F, n*classes)
	g, rg := convert[F](randVec(r, n*classes, 0.01)), convert[F](randVec(r, n*classes, 0.01))
	for k, op := range []string{"grad", "hvp", "hvp-again", "logits", "jvp"} {
		b.Run(name+"/"+op, func(b *testing.B) {
			f := func() { net.Grad(dst, x, a, labels, 1e-4) }
			switch op {
			case "hvp":
				f = func() { net.HVP(dst, x, a, labels, 1e-4, u) }
			case "logits":
				f = func() { net.Logits(z, x, a, n) }
			case "jvp":
				net.Logits(z, x, a, n)
				f = func() { net.JVP(v, x, u) }
			case "hvp-again":
				net.Logits(z, x, a, n)
				f = func() {
					net.JVP(v, x, u)
					clear(dst)
					net.VJPR(dst, x, u, g, rg)
				}
			}
			f() // warm-up: workspaces
			cpu := cpuSeconds()
			for b.Loop() {
				f()
			}
			s := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(1e3*s, "ms")
			b.ReportMetric(1e3*(cpuSeconds()-cpu)/float64(b.N), "cpu-ms")
			b.ReportMetric(work/s/1e9, "GFLOP/s")
			if t, ok := torchMS[name]; ok && k < 3 {
				b.ReportMetric(t[min(k, 1)], "torch-ms")
			}
		})
	}
}

// convert returns v in F.
func convert[F gemm.Float](v []float64) []F {
	w := make([]F, len(v))
	for i, t := range v {
		w[i] = F(t)
	}
	return w
}
