package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"hgpsim/internal/gemm"
)

// The convolutions choose their products by shape (conv.wDot, conv.wT,
// conv.rows): these cases reach each choice, with dense (stride 1, no
// padding) and general patch rows and the unrolled runs of 3 and 5.
var convPathCases = []struct {
	name string
	in   Shape
	sp   Spec
}{
	{"rows-k3", Shape{8, 7, 7}, Conv2D(5, 3, 1, 0)},                             // K = 72, Out not a multiple of 8
	{"rows-k5-wT", Shape{3, 9, 8}, Conv2D(8, 5, 1, 0)},                          // K = 75, runs of 5
	{"rows-k4", Shape{4, 6, 6}, Conv2D(3, 4, 1, 0)},                             // K = 64, generic runs
	{"rows-stride-pad", Shape{8, 7, 6}, Conv2D(4, 3, 2, 1)},                     // general patch rows
	{"rows-chunked", Shape{16, 4, 4}, Conv2D(6, 3, 1, 0)},                       // P = 4: chunks of 8 samples
	{"dot-weights", Shape{1, 9, 9}, Conv2D(8, 3, 1, 0)},                         // K = 9
	{"dot-weights-pad", Shape{2, 6, 7}, Conv2D(3, 3, 1, 1)},                     // K = 18
	{"dot-weights-chunked", Shape{3, 3, 3}, Conv2D(4, 2, 1, 0)},                 // K = 12, P = 4
	{"rows-rect", Shape{6, 8, 9}, Spec{Kind: KindConv2D, Out: 3, KH: 3, KW: 4}}, // K = 72, KH ≠ KW
}

func TestConvPathsAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, c := range convPathCases {
		l, err := newLayer[float64](c.sp, c.in)
		if err != nil {
			t.Fatal(err)
		}
		cv := l.(*conv[float64])
		if strings.HasPrefix(c.name, "rows") != cv.rows || strings.HasPrefix(c.name, "dot") != cv.wDot {
			t.Errorf("%s: rows = %v, wDot = %v: the case does not reach its path", c.name, cv.rows, cv.wDot)
		}
		classes := l.out().Size()
		net, err := New[float64](c.in, []Spec{c.sp}, classes)
		if err != nil {
			t.Fatal(err)
		}
		n := 11 // more than one chunk, the last one partial
		x := randVec(r, net.Dim(), 1)
		a := randVec(r, n*c.in.Size(), 1)
		z := make([]float64, n*classes)
		net.Logits(z, x, a, n)
		s := max(c.sp.Stride, 1)
		k := c.sp.Out * c.in.C * c.sp.KH * c.sp.KW
		for b := range n {
			want := naiveConv(a[b*c.in.Size():(b+1)*c.in.Size()], c.in, x[:k], x[k:], c.sp.Out, c.sp.KH, c.sp.KW, s, c.sp.Pad)
			if e := relErr(z[b*classes:(b+1)*classes], want); e > 1e-14 {
				t.Errorf("%s sample %d: relative error %.3g against the naive convolution", c.name, b, e)
			}
		}
	}
}

func TestConvPathsDerivatives(t *testing.T) {
	for _, c := range convPathCases {
		l, err := newLayer[float64](c.sp, c.in)
		if err != nil {
			t.Fatal(err)
		}
		o := l.out()
		// A second convolution past a smooth activation puts the first
		// one's input gradients and their tangents into the results.
		second := Conv2D(3, 2, 1, 0)
		if o.H < 2 || o.W < 2 {
			second = Conv2D(3, 1, 1, 0)
		}
		specs := []Spec{c.sp, Tanh(), second, Softplus(), Flatten(), Dense(3)}
		t.Run(c.name, func(t *testing.T) { checkDerivatives(t, c.in, specs, 3, 9) })
	}
	// One sample per chunk with P a multiple of 4 (100, 64, 36): the
	// backward passes read the output gradients in place (conv.inPlace).
	t.Run("in-place", func(t *testing.T) {
		specs := []Spec{Conv2D(4, 3, 1, 0), Tanh(), Conv2D(4, 3, 1, 0), Tanh(), Conv2D(3, 3, 1, 0), Softplus(), Flatten(), Dense(3)}
		checkDerivatives(t, Shape{2, 12, 12}, specs, 3, 3)
	})
}

// TestDenseWide covers dense layers wider than kSlice and wideOut, whose
// input gradients are computed in slices or transposed and weight
// gradients from gY transposed: the same bits as the plain products, in
// both precisions, and exact derivatives.
func TestDenseWide(t *testing.T) {
	t.Run("float64", denseWideCase[float64])
	t.Run("float32", denseWideCase[float32])
	specs := []Spec{Flatten(), Dense(wideOut + 9), Tanh(), Dense(3)}
	checkDerivatives(t, Shape{2, 3, 3}, specs, 3, 3)
}

func denseWideCase[F gemm.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	l := &dense[F]{ni: 7, no: max(2*kSlice, wideOut) + 5}
	n := 3
	l.reserve(n)
	rv := func(k int) []F { return convert[F](randVec(r, k, 1)) }
	g, w, x := rv(n*l.no), rv(l.no*l.ni), rv(n*l.ni)
	same := func(what string, got, want []F) {
		for i := range want {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
				t.Fatalf("%s, element %d: %.17g, plain product %.17g", what, i, got[i], want[i])
			}
		}
	}
	got, want := make([]F, n*l.ni), make([]F, n*l.ni)
	l.accNN(got, g, w, n)
	gemm.AccNN(n, l.ni, l.no, g, l.no, w, l.ni, want, l.ni)
	same("sliced gY·W", got, want)
	gw := rv(l.no * l.ni)
	gwant := append([]F(nil), gw...)
	gT := l.transposed(g, n, 0)
	l.weightGrad(gw, gT, x, n)
	gemm.AccTN(l.no, l.ni, n, g, l.no, x, l.ni, gwant, l.ni)
	same("weight gradient", gw, gwant)
	// R{gX} = R{gY}·W + gY·U: one chain over both products.
	rg, u := rv(n*l.no), rv(l.no*l.ni)
	clear(want)
	gemm.AccNN(n, l.ni, l.no, rg, l.no, w, l.ni, want, l.ni)
	gemm.AccNN(n, l.ni, l.no, g, l.no, u, l.ni, want, l.ni)
	l.inputGrad(got, n, l.inputTerm(rg, l.transposed(rg, n, 1)), w, l.inputTerm(g, gT), u)
	same("R{gY}·W + gY·U", got, want)
}

// TestPresetNoAllocations runs the presets' passes, which reach the
// product forms of large layers (patch rows, wide dense layers), after a
// first call sized the workspaces.
func TestPresetNoAllocations(t *testing.T) {
	for _, name := range []string{"fedem-cnn", "fedbio-4conv", "node-weighting"} {
		in := Shape{1, 28, 28}
		specs := mustPreset(t, name, in, 10)
		f := newFixture(t, in, specs, 10, 2, 1)
		f.run()
		labels := []int{3, 7}
		g := make([]float64, f.dim)
		for op, fn := range map[string]func(){
			"Grad": func() { f.net.Grad(g, f.x, f.a, labels, 0.1) },
			"HVP":  func() { f.net.HVP(g, f.x, f.a, labels, 0.1, f.u) },
			"VJPR": func() { f.net.VJPR(f.second, f.x, f.u, f.g, f.rg) },
		} {
			if a := testing.AllocsPerRun(2, fn); a != 0 {
				t.Errorf("%s %s: %v allocations per run", name, op, a)
			}
		}
	}
}

// A wide dense layer's gY transposed eight samples at a time holds every
// value where the plain transposition puts it, bit for bit (NaN payloads
// included, any bits), for batches of 1 to 19 (whole blocks of eight and the rest)
// and in both slots.
func TestDenseTransposedMatchesPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 13))
	for n := 1; n <= 19; n++ {
		l := &dense[float32]{ni: 3, no: wideOut + 3}
		l.reserve(n)
		for s := range 2 {
			g := make([]float32, n*l.no)
			for i := range g {
				g[i] = math.Float32frombits(r.Uint32()) // NaNs among them
			}
			got := l.transposed(g, n, s)
			want := make([]float32, len(got))
			for b := range n {
				for o := range l.no {
					want[o*n+b] = g[b*l.no+o]
				}
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("batch %d, slot %d: element %d is %x, plain %x", n, s, i,
						math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}
