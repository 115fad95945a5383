package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/datasets"
	"hgpsim/models/nn"
)

// eps32 is float32's machine epsilon, 2^-23.
const eps32 = 0x1p-23

// tol32 bounds the relative error ‖a₃₂ − a₆₄‖ / ‖a₆₄‖ of a float32 result
// against the float64 one on the same (float32-representable) inputs, and
// of a float32 loss (relative to max(1, |loss|)). A float32 product is a
// chain of sums of a few hundred to a few thousand terms per layer, each
// rounded with a relative error of at most ε; the errors of such sums grow
// like √n·ε in practice (n·ε at worst), and a ReLU or max pool can switch
// piece where a pre-activation is within rounding of 0 or of a tie. The
// cases below measure at most 5ε (they print it with -v, on an AMD EPYC);
// 2^7·ε (1.5e-5) leaves room for other kernel paths and stays far below
// the error of a wrong term (a missing regularizer or 1/n: 1e-3 and up).
const tol32 = 0x1p7 * eps32

// f32Case is one bilevel model kind built in both precisions.
type f32Case struct {
	name              string
	arch              Architecture
	head              Head
	hp                HeadParams
	features, classes int
	n                 int // rows of the dataset
}

func f32Cases() []f32Case {
	mlp := &MLPSpec{L2: 0.01, Hidden: 6}
	small := &CNNSpec{L2: 0.01, Input: []int{1, 6, 6}, Layers: []LayerSpec{
		{Kind: "conv2d", Out: 3, Kernel: 3}, {Kind: "relu"}, {Kind: "maxpool2d", Kernel: 2},
		{Kind: "flatten"}, {Kind: "dense", Out: 8}, {Kind: "tanh"}, {Kind: "dense", Out: 5}}}
	hp := HeadParams{K: 3, OuterL2: 0.02, OuterL2Labels: 0.003}
	none, lw, ens, mtlda := &plainHead{}, &labelWeightsHead{}, &ensembleHead{}, &mtldaHead{}
	hr := &hyperRepHead{Activation: "tanh", Penalty: "squared"}
	cases := []f32Case{
		{"softmax", &SoftmaxSpec{L2: 0.01}, none, hp, 9, 4, 70},
		{"logistic", &LogisticSpec{L2: 0.01}, none, hp, 9, 2, 70},
		{"mlp", mlp, none, hp, 9, 4, 70},
		{"cnn-small", small, none, hp, 36, 5, 70},
		{"label-weights/mlp", mlp, lw, hp, 9, 4, 70},
		{"label-weights/logistic", &LogisticSpec{L2: 0.01}, lw, hp, 9, 2, 70},
		{"ensemble3/softmax", &SoftmaxSpec{L2: 0.01}, ens, hp, 9, 4, 70},
		{"ensemble3/cnn-small", small, ens, hp, 36, 5, 70},
		{"ensemble-label-weights3/mlp", mlp, mtlda, hp, 9, 4, 70},
		{"ensemble-label-weights3/cnn-small", small, mtlda, hp, 36, 5, 70},
		{"hyper-representation/mlp", mlp, hr, hp, 9, 4, 70},
		{"hyper-representation/cnn-small", small, &hyperRepHead{Activation: "relu", Penalty: "squared", InnerLayers: 2}, hp, 36, 5, 70},
	}
	for _, p := range nn.Presets() {
		in := []int{1, 28, 28}
		if p == "lenet" {
			in = []int{3, 32, 32}
		}
		cases = append(cases, f32Case{"cnn-" + p, &CNNSpec{L2: 0.01, Preset: p}, none, hp, in[0] * in[1] * in[2], 10, 6})
	}
	cases = append(cases, f32Case{"ensemble-label-weights3/cnn-lenet", &CNNSpec{L2: 0.01, Preset: "lenet"}, mtlda, hp, 3 * 32 * 32, 10, 6})
	return cases
}

// round32 rounds every element of v to float32 in place, so that both
// precisions start from the same values.
func round32(v []float64) []float64 {
	for i, x := range v {
		v[i] = float64(float32(x))
	}
	return v
}

func to32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// f32Data returns n rows of float32-representable features in [0, 1)
// (image-like, so that nets see inputs of the scale they are built for)
// with uniform labels.
func f32Data(r *rand.Rand, n, d, c int) *datasets.Dataset {
	ds := &datasets.Dataset{X: make([]float64, n*d), Y: make([]int, n), N: n, D: d, C: c}
	for i := range ds.X {
		ds.X[i] = float64(float32(r.Float64()))
	}
	for i := range ds.Y {
		ds.Y[i] = r.IntN(c)
	}
	return ds
}

// f32Point is the inputs of one comparison: x, λ and u in both precisions
// (the same values) and a dataset with a minibatch.
type f32Point struct {
	x64, u64 []float64
	x32, u32 []float32
	lambda   []float64
	d        *datasets.Dataset
	idx      []int
}

func newF32Point(r *rand.Rand, c f32Case, b64 Bilevel[float64]) f32Point {
	var p f32Point
	p.x64 = make([]float64, b64.DimX())
	b64.Init(p.x64, r)
	round32(p.x64)
	p.u64 = round32(randomVec(r, b64.DimX(), 1))
	p.lambda = round32(randomVec(r, b64.DimLambda(), 0.5))
	if li, ok := b64.(LambdaInitializer); ok {
		li.InitLambda(p.lambda, r)
		round32(p.lambda)
	}
	p.x32, p.u32 = to32(p.x64), to32(p.u64)
	p.d = f32Data(r, c.n, c.features, c.classes)
	p.idx = make([]int, min(c.n, 5))
	for i := range p.idx {
		p.idx[i] = r.IntN(c.n)
	}
	return p
}

// checkClose fails unless got (float32) is within tol32 of want in
// relative 2-norm, and returns the relative error.
func checkClose(t *testing.T, what string, got []float32, want []float64) float64 {
	t.Helper()
	e := relErr(widen(got), want)
	if !(e <= tol32) {
		t.Errorf("%s: float32 relative error %.3g > %.3g (float32 ‖·‖=%.4g, float64 %.4g)", what, e, tol32,
			math.Sqrt(sumSquares(got)), math.Sqrt(sumSquares(want)))
	}
	return e
}

func checkLoss(t *testing.T, what string, got, want float64) float64 {
	t.Helper()
	e := math.Abs(got-want) / max(1, math.Abs(want))
	if !(e <= tol32) {
		t.Errorf("%s: float32 %.9g, float64 %.9g: relative error %.3g > %.3g", what, got, want, e, tol32)
	}
	return e
}

// TestFloat32MatchesFloat64 computes every product of every model kind in
// float32 and float64 from the same float32-representable x, λ, u and data,
// and requires them to agree within tol32.
func TestFloat32MatchesFloat64(t *testing.T) {
	for ci, c := range f32Cases() {
		t.Run(c.name, func(t *testing.T) {
			r := testRand(t, 3200+uint64(ci))
			b64 := Build[float64](c.arch, c.head, c.features, c.classes, c.hp)
			b32 := Build[float32](c.arch, c.head, c.features, c.classes, c.hp)
			if b64.DimX() != b32.DimX() || b64.DimLambda() != b32.DimLambda() {
				t.Fatalf("dims differ: float64 %d, %d; float32 %d, %d", b64.DimX(), b64.DimLambda(), b32.DimX(), b32.DimLambda())
			}
			p := newF32Point(r, c, b64)
			var worst float64
			note := func(e float64) { worst = max(worst, e) }
			for _, idx := range [][]int{nil, p.idx} {
				batch := fmt.Sprintf("batch %d", len(idx))
				if idx == nil {
					batch = "full batch"
				}
				dx64, dx32 := make([]float64, b64.DimX()), make([]float32, b32.DimX())
				dl64, dl32 := make([]float64, b64.DimLambda()), make([]float64, b32.DimLambda())

				note(checkLoss(t, batch+" InnerLoss", b32.InnerLoss(p.x32, p.lambda, p.d, idx), b64.InnerLoss(p.x64, p.lambda, p.d, idx)))
				f64 := b64.InnerGrad(dx64, p.x64, p.lambda, p.d, idx)
				f32 := b32.InnerGrad(dx32, p.x32, p.lambda, p.d, idx)
				note(checkLoss(t, batch+" InnerGrad's value", f32, f64))
				note(checkClose(t, batch+" InnerGrad", dx32, dx64))

				b64.InnerHVP(dx64, p.x64, p.lambda, p.d, idx, p.u64)
				b32.InnerHVP(dx32, p.x32, p.lambda, p.d, idx, p.u32)
				note(checkClose(t, batch+" InnerHVP", dx32, dx64))

				b64.InnerCross(dl64, p.x64, p.lambda, p.d, idx, p.u64)
				b32.InnerCross(dl32, p.x32, p.lambda, p.d, idx, p.u32)
				note(checkClose(t, batch+" InnerCross", to32(dl32), dl64))

				f64 = b64.OuterGrad(dx64, dl64, p.x64, p.lambda, p.d, idx)
				f32 = b32.OuterGrad(dx32, dl32, p.x32, p.lambda, p.d, idx)
				note(checkLoss(t, batch+" OuterGrad's value", f32, f64))
				note(checkClose(t, batch+" OuterGrad ∂ₓ", dx32, dx64))
				note(checkClose(t, batch+" OuterGrad ∂_λ", to32(dl32), dl64))

				a64, a32 := b64.Accuracy(p.x64, p.lambda, p.d, idx), b32.Accuracy(p.x32, p.lambda, p.d, idx)
				// A row whose two best scores are within rounding may go
				// either way: allow one.
				if n := float64(batchSize(p.d, idx)); math.Abs(a64-a32)*n > 1.5 {
					t.Errorf("%s Accuracy: float32 %v, float64 %v", batch, a32, a64)
				}
			}
			t.Logf("largest relative error %.3g (%.0f ε)", worst, worst/eps32)
		})
	}
}

// f32Calls runs every method of m at p once and returns the float32
// outputs and the float64 ones (values, λ-sized vectors) in order.
func f32Calls(m Bilevel[float32], p f32Point) ([]float32, []float64) {
	dx, dl := make([]float32, m.DimX()), make([]float64, m.DimLambda())
	var o32 []float32
	var o64 []float64
	for _, idx := range [][]int{nil, p.idx} {
		o64 = append(o64, m.InnerLoss(p.x32, p.lambda, p.d, idx), m.InnerGrad(dx, p.x32, p.lambda, p.d, idx))
		o32 = append(o32, dx...)
		m.InnerHVP(dx, p.x32, p.lambda, p.d, idx, p.u32)
		o32 = append(o32, dx...)
		m.InnerCross(dl, p.x32, p.lambda, p.d, idx, p.u32)
		o64 = append(o64, dl...)
		o64 = append(o64, m.OuterGrad(dx, dl, p.x32, p.lambda, p.d, idx), m.Accuracy(p.x32, p.lambda, p.d, idx))
		o32 = append(o32, dx...)
		o64 = append(o64, dl...)
	}
	return o32, o64
}

func sameBits32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestFloat32CloneAllocsAndLinearize: in float32 a Clone gives the same
// bits as its original (and calling twice gives the same bits again), no
// method allocates once the buffers have grown, and a Linearized gives the
// bits of InnerHVP and InnerCross.
func TestFloat32CloneAllocsAndLinearize(t *testing.T) {
	for ci, c := range f32Cases() {
		if c.n < 10 {
			continue // the presets: covered by TestFloat32MatchesFloat64, too slow for AllocsPerRun
		}
		t.Run(c.name, func(t *testing.T) {
			r := testRand(t, 3300+uint64(ci))
			m := Build[float32](c.arch, c.head, c.features, c.classes, c.hp)
			p := newF32Point(r, c, Build[float64](c.arch, c.head, c.features, c.classes, c.hp))
			a32, a64 := f32Calls(m, p)
			b32, b64 := f32Calls(m.Clone(), p)
			c32, c64 := f32Calls(m, p)
			if !sameBits32(a32, b32) || !sameFloats(a64, b64) {
				t.Error("a Clone's outputs differ from the original's")
			}
			if !sameBits32(a32, c32) || !sameFloats(a64, c64) {
				t.Error("a second round of calls gives other bits")
			}
			dx, dl := make([]float32, m.DimX()), make([]float64, m.DimLambda())
			calls := map[string]func(){
				"InnerLoss": func() { m.InnerLoss(p.x32, p.lambda, p.d, p.idx) },
				"InnerGrad": func() { m.InnerGrad(dx, p.x32, p.lambda, p.d, p.idx) },
				"InnerHVP":  func() { m.InnerHVP(dx, p.x32, p.lambda, p.d, p.idx, p.u32) },
				"InnerCross": func() {
					m.InnerCross(dl, p.x32, p.lambda, p.d, p.idx, p.u32)
				},
				"OuterGrad": func() { m.OuterGrad(dx, dl, p.x32, p.lambda, p.d, p.idx) },
				"Accuracy":  func() { m.Accuracy(p.x32, p.lambda, p.d, nil) },
			}
			for name, f := range calls {
				if a := testing.AllocsPerRun(5, f); a != 0 {
					t.Errorf("%s allocates %v times per call in float32", name, a)
				}
			}
			lin, ok := m.(Linearizer[float32])
			if !ok {
				return
			}
			hv, cross := make([]float32, m.DimX()), make([]float64, m.DimLambda())
			for _, idx := range [][]int{nil, p.idx} {
				m.InnerHVP(dx, p.x32, p.lambda, p.d, idx, p.u32)
				m.InnerCross(dl, p.x32, p.lambda, p.d, idx, p.u32)
				l := lin.Linearize(p.x32, p.lambda, p.d, idx)
				for range 2 { // the second call replays a cached forward pass where there is one
					l.Products(hv, cross, p.u32)
					if !sameBits32(hv, dx) || !sameFloats(cross, dl) {
						t.Errorf("batch %d: Linearized products differ from InnerHVP, InnerCross", len(idx))
					}
				}
				l.Release()
			}
		})
	}
}

// TestFloat32SampleWeighted compares the per-sample weighted loss's
// methods in float32 with float64 on the same inputs.
func TestFloat32SampleWeighted(t *testing.T) {
	r := testRand(t, 3400)
	for _, arch := range []Architecture{&SoftmaxSpec{L2: 0.01}, &MLPSpec{L2: 0.01, Hidden: 6}} {
		w64 := NewSampleWeighted(NewClassifier[float64](arch, 9, 4))
		w32 := NewSampleWeighted(NewClassifier[float32](arch, 9, 4))
		d := f32Data(r, 70, 9, 4)
		x64 := make([]float64, w64.Dim())
		w64.Init(x64, r)
		round32(x64)
		u64 := round32(randomVec(r, w64.Dim(), 1))
		x32, u32 := to32(x64), to32(u64)
		lambda := round32(randomVec(r, d.N, 1))
		lambda[3], lambda[10] = 0, 0
		idx := []int{3, 5, 8, 10, 3, 60}
		g64, g32 := make([]float64, w64.Dim()), make([]float32, w64.Dim())
		name := fmt.Sprintf("%T", arch)
		checkLoss(t, name+" Loss", w32.Loss(x32, lambda, d, idx), w64.Loss(x64, lambda, d, idx))
		checkLoss(t, name+" Grad's value", w32.Grad(g32, x32, lambda, d, idx), w64.Grad(g64, x64, lambda, d, idx))
		checkClose(t, name+" Grad", g32, g64)
		w64.HVP(g64, x64, lambda, d, idx, u64)
		w32.HVP(g32, x32, lambda, d, idx, u32)
		checkClose(t, name+" HVP", g32, g64)
		s64, s32 := make([]float64, len(idx)), make([]float64, len(idx))
		w64.SampleDirectional(s64, x64, d, idx, u64)
		w32.SampleDirectional(s32, x32, d, idx, u32)
		checkClose(t, name+" SampleDirectional", to32(s32), s64)
		checkLoss(t, name+" SampleGrad's value", w32.SampleGrad(g32, x32, d, 7), w64.SampleGrad(g64, x64, d, 7))
		checkClose(t, name+" SampleGrad", g32, g64)
		checkLoss(t, name+" Probability", w32.Probability(x32, d, 7), w64.Probability(x64, d, 7))
		if a := testing.AllocsPerRun(5, func() { w32.HVP(g32, x32, lambda, d, idx, u32) }); a != 0 {
			t.Errorf("%s: float32 HVP allocates %v times per call", name, a)
		}
	}
}

// TestFloat32CodedRows: a float32 model reads a coded Dataset's rows
// decoded straight to float32, with the values of the float64 layout
// rounded once.
func TestFloat32CodedRows(t *testing.T) {
	r := testRand(t, 3500)
	plain := f32Data(r, 70, 9, 4)
	var lv datasets.Levels
	for c := range lv {
		lv[c] = float64(c) / 255
	}
	coded := &datasets.Dataset{Codes: make([]uint8, len(plain.X)), Levels: &lv, Y: plain.Y, N: plain.N, D: plain.D, C: plain.C}
	flat := &datasets.Dataset{X: make([]float64, len(plain.X)), Y: plain.Y, N: plain.N, D: plain.D, C: plain.C}
	for i := range coded.Codes {
		coded.Codes[i] = uint8(r.IntN(256))
		flat.X[i] = float64(float32(lv[coded.Codes[i]]))
	}
	m := Build[float32](&MLPSpec{L2: 0.01, Hidden: 6}, &mtldaHead{}, 9, 4, HeadParams{K: 2, OuterL2: 0.01})
	p := newF32Point(r, f32Case{n: 70, features: 9, classes: 4}, Build[float64](&MLPSpec{L2: 0.01, Hidden: 6}, &mtldaHead{}, 9, 4, HeadParams{K: 2, OuterL2: 0.01}))
	p.d = coded
	a32, a64 := f32Calls(m, p)
	p.d = flat
	b32, b64 := f32Calls(m.Clone(), p)
	if !sameBits32(a32, b32) || !sameFloats(a64, b64) {
		t.Error("a coded Dataset gives other bits than its rows rounded to float32")
	}
}

// TestFloat32Cost: a cnn's workspace estimate counts elements of the
// model's precision.
func TestFloat32Cost(t *testing.T) {
	s := &CNNSpec{L2: 0.01, Preset: "fedem-cnn"}
	c := s.Cost(784, 10, 128)
	if c.Workspace <= 0 || c.Workspace32 <= 0 {
		t.Fatalf("Cost = %+v, want positive workspaces", c)
	}
	if r := float64(c.Workspace32) / float64(c.Workspace); r < 0.45 || r > 0.55 {
		t.Errorf("float32 workspace %d is %.3f of float64's %d, want about half", c.Workspace32, r, c.Workspace)
	}
	in, ls, _, err := s.plan(784, 10)
	if err != nil {
		t.Fatal(err)
	}
	info, err := nn.PlanOf[float32](in, ls, 10)
	if err != nil {
		t.Fatal(err)
	}
	if WorkspaceOf[float32](c) != info.Memory(batchChunk) || WorkspaceOf[float64](c) != c.Workspace {
		t.Errorf("WorkspaceOf: %d, %d; want %d, %d", WorkspaceOf[float32](c), WorkspaceOf[float64](c), info.Memory(batchChunk), c.Workspace)
	}
}
