package nn

import (
	"math/rand/v2"
	"testing"

	"hgpsim/internal/gemm"
)

// BenchmarkLayers times the passes of norm-16-32's first group norm and
// max pool at batch 128, apart from the matrix products around them: the
// float64 layers as layer/pass, the float32 ones as f32/layer/pass.
func BenchmarkLayers(b *testing.B) {
	benchLayers[float64](b, "")
	benchLayers[float32](b, "f32/")
}

func benchLayers[F gemm.Float](b *testing.B, prefix string) {
	const n = 128
	in := Shape{16, 24, 24}
	r := rand.New(rand.NewPCG(3, 4))
	size := n * in.Size()
	x, rx := convert[F](randVec(r, size, 1)), convert[F](randVec(r, size, 1))
	gy, rgy := convert[F](randVec(r, size, 1)), convert[F](randVec(r, size, 1))
	y, ry, gx, rgx := make([]F, size), make([]F, size), make([]F, size), make([]F, size)
	gn, err := newGroupNorm[F](GroupNorm(1), in)
	if err != nil {
		b.Fatal(err)
	}
	gn.reserve(n)
	w, u := make([]F, gn.params()), convert[F](randVec(r, gn.params(), 0.1))
	gn.init(w, r)
	gw := make([]F, len(w))
	gn.forward(y, x, w, n)
	gn.rforward(ry, rx, x, y, w, u, n)
	b.Run(prefix+"norm/forward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.forward(y, x, w, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run(prefix+"norm/backward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.backward(gx, gw, gy, x, y, w, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run(prefix+"norm/rforward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.rforward(ry, rx, x, y, w, u, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run(prefix+"norm/rbackward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.rbackward(gx, rgx, gw, gy, rgy, x, rx, y, ry, w, u, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	pl, err := newPool[F](MaxPool2D(2, 2), in)
	if err != nil {
		b.Fatal(err)
	}
	pl.reserve(n)
	po := make([]F, n*pl.out().Size())
	b.Run(prefix+"pool/forward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			pl.forward(po, x, nil, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run(prefix+"pool/backward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			pl.backward(gx, nil, po, x, po, nil, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
}
