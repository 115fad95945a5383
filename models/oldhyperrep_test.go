package models

import (
	"fmt"
	"testing"

	"hgpsim/datasets"
	"hgpsim/models/nn"
)

// TestHyperRepMatchesHandWrittenTypes compares the one HyperRep type with
// the two it replaces (oldhyperrep_ref_test.go) bit for bit: on the MLP cut
// with ReLU and tanh, with and without dropout (mask on) and the norm
// penalty, at shapes that take every branch of the dense layer, and on
// cut cnns with one and two inner layers; Init, InitLambda and every
// product, over two λ (the feature cache is rebuilt when λ changes).
func TestHyperRepMatchesHandWrittenTypes(t *testing.T) {
	type pair struct {
		name      string
		got, want Bilevel
		d, c      int
	}
	var pairs []pair
	for _, s := range []struct{ d, h, c int }{{784, 200, 10}, {30, 300, 4}, {12, 9, 140}} {
		for _, relu := range []bool{true, false} {
			for _, o := range []HyperRepOptions{{}, {Dropout: 0.5}, {NormPenalty: true}, {Dropout: 0.3, NormPenalty: true}} {
				pairs = append(pairs, pair{fmt.Sprintf("mlp %dx%dx%d relu=%v %+v", s.d, s.h, s.c, relu, o),
					NewHyperRepWith(s.d, s.h, s.c, 0.02, relu, o), newOldHyperRepWith(s.d, s.h, s.c, 0.02, relu, o), s.d, s.c})
			}
		}
	}
	in := nn.Shape{C: 1, H: 5, W: 5}
	for _, relu := range []bool{true, false} {
		for _, k := range []int{1, 2} {
			got, err := NewCNNHyperRep(in, smallHyperLayers(relu), 3, k, 0.03)
			if err != nil {
				t.Fatal(err)
			}
			want, err := newOldCNNHyperRep(in, smallHyperLayers(relu), 3, k, 0.03)
			if err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, pair{fmt.Sprintf("cnn relu=%v k=%d", relu, k), got, want, 25, 3})
		}
	}
	for pi, p := range pairs {
		d := batchData(t, uint64(30+pi), 150, p.d, p.c)
		val := batchData(t, uint64(60+pi), 150, p.d, p.c)
		x, xw := make([]float64, p.got.DimX()), make([]float64, p.want.DimX())
		lambda, lw := make([]float64, p.got.DimLambda()), make([]float64, p.want.DimLambda())
		p.got.Init(x, testRand(t, 3))
		p.want.Init(xw, testRand(t, 3))
		sameBits(t, p.name+" Init", x, xw)
		p.got.(LambdaInitializer).InitLambda(lambda, testRand(t, 4))
		p.want.(LambdaInitializer).InitLambda(lw, testRand(t, 4))
		sameBits(t, p.name+" InitLambda", lambda, lw)
		r := testRand(t, uint64(pi))
		u := randomVec(r, len(x), 1)
		for step := range 2 {
			for bn, idx := range map[string][]int{"batch": {3, 0, 149, 3, 77, 12, 100}, "all": nil} {
				what := fmt.Sprintf("%s/step %d/%s", p.name, step, bn)
				if dw, ok := p.want.(Dropout); ok {
					p.got.(Dropout).SetMask(uint64(11+step), true)
					dw.SetMask(uint64(11+step), true)
				}
				compareHyperRep(t, what, p.got, p.want, x, lambda, u, d, val, idx)
			}
			for i := range lambda {
				lambda[i] += 0.01 * r.NormFloat64()
			}
		}
	}
}

func compareHyperRep(t *testing.T, what string, got, want Bilevel, x, lambda, u []float64, d, val *datasets.Dataset, idx []int) {
	t.Helper()
	gx, wx := make([]float64, len(x)), make([]float64, len(x))
	gl, wl := make([]float64, len(lambda)), make([]float64, len(lambda))
	sameBit(t, what+" InnerLoss", got.InnerLoss(x, lambda, d, idx), want.InnerLoss(x, lambda, d, idx))
	sameBit(t, what+" Accuracy", got.Accuracy(x, lambda, val, nil), want.Accuracy(x, lambda, val, nil))
	sameBit(t, what+" InnerGrad value", got.InnerGrad(gx, x, lambda, d, idx), want.InnerGrad(wx, x, lambda, d, idx))
	sameBits(t, what+" InnerGrad", gx, wx)
	got.InnerHVP(gx, x, lambda, d, idx, u)
	want.InnerHVP(wx, x, lambda, d, idx, u)
	sameBits(t, what+" InnerHVP", gx, wx)
	got.InnerCross(gl, x, lambda, d, idx, u)
	want.InnerCross(wl, x, lambda, d, idx, u)
	sameBits(t, what+" InnerCross", gl, wl)
	sameBit(t, what+" OuterGrad value", got.OuterGrad(gx, gl, x, lambda, val, idx), want.OuterGrad(wx, wl, x, lambda, val, idx))
	sameBits(t, what+" OuterGrad x", gx, wx)
	sameBits(t, what+" OuterGrad λ", gl, wl)
	sameBit(t, what+" OuterGrad λ only", got.OuterGrad(nil, gl, x, lambda, val, nil), want.OuterGrad(nil, wl, x, lambda, val, nil))
	sameBits(t, what+" OuterGrad λ only", gl, wl)
	sameBit(t, what+" OuterGrad x only", got.OuterGrad(gx, nil, x, lambda, val, idx), want.OuterGrad(wx, nil, x, lambda, val, idx))
	sameBits(t, what+" OuterGrad x only", gx, wx)
	sameBit(t, what+" OuterGrad value only", got.OuterGrad(nil, nil, x, lambda, val, idx), want.OuterGrad(nil, nil, x, lambda, val, idx))
}
