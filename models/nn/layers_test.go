package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveConv is the convolution of one sample written as its definition.
func naiveConv(x []float64, in Shape, w, bias []float64, out, kh, kw, s, pad int) []float64 {
	ho, wo := (in.H+2*pad-kh)/s+1, (in.W+2*pad-kw)/s+1
	y := make([]float64, out*ho*wo)
	for o := range out {
		for oy := range ho {
			for ox := range wo {
				sum := bias[o]
				for c := range in.C {
					for ky := range kh {
						for kx := range kw {
							iy, ix := oy*s-pad+ky, ox*s-pad+kx
							if iy < 0 || iy >= in.H || ix < 0 || ix >= in.W {
								continue
							}
							sum += w[((o*in.C+c)*kh+ky)*kw+kx] * x[(c*in.H+iy)*in.W+ix]
						}
					}
				}
				y[(o*ho+oy)*wo+ox] = sum
			}
		}
	}
	return y
}

func TestConvAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		in                     Shape
		out, kh, kw, s, pad, n int
	}{
		{Shape{1, 8, 8}, 3, 3, 3, 1, 0, 3},
		{Shape{2, 7, 9}, 4, 3, 2, 2, 1, 2},
		{Shape{3, 10, 10}, 2, 5, 5, 1, 2, 3},
		{Shape{2, 6, 5}, 1, 1, 1, 3, 0, 2},
		{Shape{1, 5, 5}, 2, 5, 5, 1, 0, 1},
	} {
		sp := Spec{Kind: KindConv2D, Out: c.out, KH: c.kh, KW: c.kw, Stride: c.s, Pad: c.pad}
		l, err := newLayer[float64](sp, c.in)
		if err != nil {
			t.Fatal(err)
		}
		classes := l.out().Size()
		net, err := New[float64](c.in, []Spec{sp}, classes)
		if err != nil {
			t.Fatal(err)
		}
		x := randVec(r, net.Dim(), 1)
		a := randVec(r, c.n*c.in.Size(), 1)
		z := make([]float64, c.n*classes)
		net.Logits(z, x, a, c.n)
		k := c.out * c.in.C * c.kh * c.kw
		for b := range c.n {
			want := naiveConv(a[b*c.in.Size():(b+1)*c.in.Size()], c.in, x[:k], x[k:], c.out, c.kh, c.kw, c.s, c.pad)
			got := z[b*classes : (b+1)*classes]
			if e := relErr(got, want); e > 1e-14 {
				t.Errorf("%+v sample %d: relative error %.3g against the naive convolution", c, b, e)
			}
		}
	}
}

func TestMaxPoolTiesGoToFirst(t *testing.T) {
	net, err := New[float64](Shape{1, 2, 4}, []Spec{MaxPool2D(2, 2)}, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Window 0 holds 1, 3, 3, 2 (the two 3s at offsets 1 and 4); window 1
	// holds −1 everywhere.
	a := []float64{1, 3, -1, -1, 3, 2, -1, -1}
	z := make([]float64, 2)
	net.Logits(z, nil, a, 1)
	if z[0] != 3 || z[1] != -1 {
		t.Fatalf("maxima %v, want [3 −1]", z)
	}
	l := net.layers[0].(*pool[float64])
	if l.arg[0] != 1 || l.arg[1] != 2 {
		t.Errorf("argmax offsets %v, want the first maximum of each window: [1 2]", l.arg[:2])
	}
	// The tangent follows the chosen element.
	g := make([]float64, 8)
	net.layers[0].backward(g, nil, []float64{1, 10}, a, z, nil, 1)
	want := []float64{0, 1, 10, 0, 0, 0, 0, 0}
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("input gradient %v, want %v", g, want)
		}
	}
}

// The 2×2 tournament selects what the row-major scan selects, ties
// included, and outputs its bits (−0 stays −0); widths of 4 windows and
// more reach the vector kernel where it runs, with scalar windows left over.
func TestMaxPool2MatchesScan(t *testing.T) {
	for _, in := range []Shape{
		{3, 7, 6},  // odd height: the last row is dropped
		{2, 9, 22}, // 11 windows a row: two groups of four and three more
		{1, 8, 17}, // odd width: the last column is dropped
	} {
		l, err := newPool[float64](MaxPool2D(2, 2), in)
		if err != nil {
			t.Fatal(err)
		}
		p := l.(*pool[float64])
		n := 4
		p.reserve(n)
		r := rand.New(rand.NewPCG(5, 5))
		x := make([]float64, n*in.Size())
		zeros := []float64{0, math.Copysign(0, -1)}
		for i := range x {
			x[i] = float64(r.IntN(3)) - 1 // many ties
			if x[i] == 0 {
				x[i] = zeros[r.IntN(2)] // +0 and −0 tie
			}
		}
		y1, y2 := make([]float64, n*p.o.Size()), make([]float64, n*p.o.Size())
		p.forwardMax2(y1, x, n)
		a1 := append([]int32(nil), p.arg[:len(y1)]...)
		p.forwardMaxScan(y2, x, n)
		for i := range y1 {
			if math.Float64bits(y1[i]) != math.Float64bits(y2[i]) || a1[i] != p.arg[i] {
				t.Fatalf("%v, output %d: tournament (%v at %d), scan (%v at %d)", in, i, y1[i], a1[i], y2[i], p.arg[i])
			}
		}
	}
}

// Max pooling's backward pass stores into disjoint windows what the
// general accumulation gives, bit for bit (+0 for a −0 gradient), for
// disjoint and overlapping windows, ties included.
func TestMaxPoolScatterMatchesAccumulation(t *testing.T) {
	for _, c := range []struct {
		sp Spec
		in Shape
	}{
		{MaxPool2D(2, 2), Shape{3, 7, 6}},
		{MaxPool2D(3, 2), Shape{2, 9, 8}}, // overlapping windows
		{MaxPool2D(2, 3), Shape{2, 9, 8}}, // gaps between windows
	} {
		l, err := newPool[float64](c.sp, c.in)
		if err != nil {
			t.Fatal(err)
		}
		p := l.(*pool[float64])
		n := 3
		p.reserve(n)
		r := rand.New(rand.NewPCG(7, 7))
		x := make([]float64, n*c.in.Size())
		for i := range x {
			x[i] = float64(r.IntN(3)) - 1 // many ties
		}
		gy := make([]float64, n*p.o.Size())
		zeros := []float64{0, math.Copysign(0, -1)}
		for i := range gy {
			gy[i] = r.NormFloat64()
			if r.IntN(4) == 0 {
				gy[i] = zeros[r.IntN(2)]
			}
		}
		p.forward(make([]float64, len(gy)), x, nil, n)
		gx := make([]float64, len(x))
		for i := range gx {
			gx[i] = math.NaN() // every value must be written
		}
		p.backward(gx, nil, gy, x, nil, nil, n)
		want := make([]float64, len(x))
		ni, no := c.in.Size(), p.o.Size()
		for i, v := range gy {
			want[i/no*ni+int(p.arg[i])] += v
		}
		for i := range gx {
			if math.Float64bits(gx[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%v %v: gx[%d] = %v, want %v", c.sp.Kind, c.in, i, gx[i], want[i])
			}
		}
	}
}
