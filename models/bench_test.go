package models

import (
	"fmt"
	"testing"
)

func BenchmarkSoftmaxGrad(b *testing.B) {
	for _, c := range []struct{ d, k, batch int }{{20, 5, 32}, {784, 10, 128}} {
		b.Run(fmt.Sprintf("D%d_C%d_B%d", c.d, c.k, c.batch), func(b *testing.B) {
			r := testRand(b, 0)
			data := randomData(r, 4*c.batch, c.d, c.k)
			m := NewSoftmax(c.d, c.k, 1e-3)
			x := randomVec(r, m.Dim(), 0.1)
			g := make([]float64, m.Dim())
			idx := make([]int, c.batch)
			for i := range idx {
				idx[i] = r.IntN(data.N)
			}
			b.ReportAllocs()
			for b.Loop() {
				m.Grad(g, x, data, idx)
			}
		})
	}
}

func BenchmarkMLPHVP(b *testing.B) {
	const features, hidden, classes, batch = 784, 64, 10, 128
	r := testRand(b, 0)
	data := randomData(r, 4*batch, features, classes)
	m := NewMLP(features, hidden, classes, 1e-3)
	x := make([]float64, m.Dim())
	m.Init(x, r)
	u := randomVec(r, m.Dim(), 1)
	hu := make([]float64, m.Dim())
	idx := make([]int, batch)
	for i := range idx {
		idx[i] = r.IntN(data.N)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.HVP(hu, x, data, idx, u)
	}
}

func BenchmarkMLPGrad(b *testing.B) {
	const features, hidden, classes, batch = 784, 64, 10, 128
	r := testRand(b, 0)
	data := randomData(r, 4*batch, features, classes)
	m := NewMLP(features, hidden, classes, 1e-3)
	x := make([]float64, m.Dim())
	m.Init(x, r)
	g := make([]float64, m.Dim())
	idx := make([]int, batch)
	for i := range idx {
		idx[i] = r.IntN(data.N)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Grad(g, x, data, idx)
	}
}

func BenchmarkSoftmaxHVP(b *testing.B) {
	const features, classes, batch = 784, 10, 128
	r := testRand(b, 0)
	data := randomData(r, 4*batch, features, classes)
	m := NewSoftmax(features, classes, 1e-3)
	x := randomVec(r, m.Dim(), 0.1)
	u := randomVec(r, m.Dim(), 1)
	hu := make([]float64, m.Dim())
	idx := make([]int, batch)
	for i := range idx {
		idx[i] = r.IntN(data.N)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.HVP(hu, x, data, idx, u)
	}
}
