package nn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLayers times the passes of norm-16-32's first group norm and
// max pool at batch 128, apart from the matrix products around them.
func BenchmarkLayers(b *testing.B) {
	const n = 128
	in := Shape{16, 24, 24}
	r := rand.New(rand.NewPCG(3, 4))
	size := n * in.Size()
	x, rx := randVec(r, size, 1), randVec(r, size, 1)
	gy, rgy := randVec(r, size, 1), randVec(r, size, 1)
	y, ry, gx, rgx := make([]float64, size), make([]float64, size), make([]float64, size), make([]float64, size)
	gn, err := newGroupNorm[float64](GroupNorm(1), in)
	if err != nil {
		b.Fatal(err)
	}
	gn.reserve(n)
	w, u := make([]float64, gn.params()), randVec(r, gn.params(), 0.1)
	gn.init(w, r)
	gw := make([]float64, len(w))
	gn.forward(y, x, w, n)
	gn.rforward(ry, rx, x, y, w, u, n)
	b.Run("norm/forward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.forward(y, x, w, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run("norm/backward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.backward(gx, gw, gy, x, y, w, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run("norm/rforward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.rforward(ry, rx, x, y, w, u, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run("norm/rbackward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			gn.rbackward(gx, rgx, gw, gy, rgy, x, rx, y, ry, w, u, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	pl, err := newPool[float64](MaxPool2D(2, 2), in)
	if err != nil {
		b.Fatal(err)
	}
	pl.reserve(n)
	po := make([]float64, n*pl.out().Size())
	b.Run("pool/forward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			pl.forward(po, x, nil, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
	b.Run("pool/backward", func(b *testing.B) {
		cpu := cpuSeconds()
		for b.Loop() {
			pl.backward(gx, nil, po, x, po, nil, n)
		}
		b.ReportMetric(1e6*(cpuSeconds()-cpu)/float64(b.N), "cpu-us")
	})
}
