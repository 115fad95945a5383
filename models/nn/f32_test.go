package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// A Net[float32] computes what a Net[float64] does, in float32: on the
// same float32-representable parameters, data, directions and logit
// weights, every primitive agrees with the float64 result to a relative
// error that float32's rounding explains.
//
// The tolerance: float32's unit roundoff is u = 2⁻²⁴ ≈ 6.0e-8. A sum of K
// rounded terms of mixed signs is off by about √K·u relative to its terms
// (rounding errors of random sign add as a random walk), and each of a
// net's L layers adds such an error to that of its input, in the forward
// pass and again in each derivative pass along the chain. tol32 allows
// twice L·√K·u for K the longest sum of the net (c = 2 covers outputs
// smaller than their terms after cancellation); the errors measured on the
// cases below are 8 to 1000 times smaller, while a wrong value anywhere
// shows as an error of order 1. Both nets see the same float32 values, so
// what differs is the rounding of float32's own arithmetic alone.
func tol32(net *Net[float64], n int) float64 {
	k := 1
	for _, l := range net.layers {
		switch l := l.(type) {
		case *conv[float64]:
			// Forward sums over K, weight gradients over the batch's positions.
			k = max(k, l.k, n*l.p)
		case *dense[float64]:
			k = max(k, l.ni, l.no, n)
		case *groupNorm[float64]:
			k = max(k, l.m)
		case *pool[float64]:
			k = max(k, l.kh*l.kw)
		}
	}
	return 2 * float64(len(net.layers)) * math.Sqrt(float64(k)) * 0x1p-24
}

func to32(v []float64) []float32 {
	w := make([]float32, len(v))
	for i, t := range v {
		w[i] = float32(t)
	}
	return w
}

func to64(v []float32) []float64 {
	w := make([]float64, len(v))
	for i, t := range v {
		w[i] = float64(t)
	}
	return w
}

// round32 rounds v to float32 in place.
func round32(v []float64) {
	for i, t := range v {
		v[i] = float64(float32(t))
	}
}

// precisionPair is a fixture rounded to float32 and a Net[float32] with
// the same layers, fed the same values.
type precisionPair struct {
	f              *fixture
	net            *Net[float32]
	x, u, a, g, rg []float32
	labels         []int
}

func newPrecisionPair(t *testing.T, in Shape, specs []Spec, classes, n int, seed uint64) *precisionPair {
	t.Helper()
	f := newFixture(t, in, specs, classes, n, seed)
	for _, v := range [][]float64{f.x, f.u, f.a, f.g, f.rg} {
		round32(v)
	}
	net, err := New[float32](in, specs, classes)
	if err != nil {
		t.Fatal(err)
	}
	p := &precisionPair{f: f, net: net, x: to32(f.x), u: to32(f.u), a: to32(f.a), g: to32(f.g), rg: to32(f.rg)}
	for b := range n {
		p.labels = append(p.labels, (b*7+int(seed))%classes)
	}
	return p
}

// samePieces reports whether the two nets' last Logits chose the same
// pieces of every ReLU (the sign of each input) and max pool (the selected
// element of each window). Where float32 rounding moves an input across a
// kink the two compute different pieces of the function, and their
// derivatives need not be close.
func (p *precisionPair) samePieces() bool {
	n := p.f.n
	for i, l := range p.f.net.layers {
		switch l := l.(type) {
		case *relu[float64]:
			y64, y32 := p.f.net.acts[i][:n*l.shape.Size()], p.net.acts[i]
			for j, v := range y64 {
				if (v > 0) != (y32[j] > 0) {
					return false
				}
			}
		case *pool[float64]:
			if !l.max {
				continue
			}
			a32 := p.net.layers[i].(*pool[float32]).arg
			for j, a := range l.arg[:n*l.o.Size()] {
				if a != a32[j] {
					return false
				}
			}
		}
	}
	return true
}

// results runs every primitive on both nets and returns, per primitive,
// the float64 result and the float32 one widened.
func (p *precisionPair) results() (names []string, r64, r32 [][]float64) {
	f, net, n, c := p.f, p.net, p.f.n, p.f.classes
	dim, ins := f.dim, n*f.net.Input().Size()
	add := func(name string, a []float64, b []float32) {
		names, r64, r32 = append(names, name), append(r64, a), append(r32, to64(b))
	}
	z64, z32 := make([]float64, n*c), make([]float32, n*c)
	f.net.Logits(z64, f.x, f.a, n)
	net.Logits(z32, p.x, p.a, n)
	add("Logits", z64, z32)
	v64, v32 := make([]float64, n*c), make([]float32, n*c)
	f.net.JVP(v64, f.x, f.u)
	net.JVP(v32, p.x, p.u)
	add("JVP", v64, v32)
	d64, d32 := make([]float64, dim), make([]float32, dim)
	ga64, ga32 := make([]float64, ins), make([]float32, ins)
	f.net.VJPInput(d64, ga64, f.x, f.g)
	net.VJPInput(d32, ga32, p.x, p.g)
	add("VJP", d64, d32)
	add("VJPInput", ga64, ga32)
	s64, s32 := make([]float64, dim), make([]float32, dim)
	f.net.VJPR(s64, f.x, f.u, f.g, f.rg)
	net.VJPR(s32, p.x, p.u, p.g, p.rg)
	add("VJPR", s64, s32)
	s64, s32 = make([]float64, dim), make([]float32, dim)
	rga64, rga32 := make([]float64, ins), make([]float32, ins)
	f.net.VJPRInput(s64, rga64, f.x, f.u, f.g, f.rg)
	net.VJPRInput(s32, rga32, p.x, p.u, p.g, p.rg)
	add("VJPRInput", s64, s32)
	add("VJPRInput gA", rga64, rga32)
	g64, g32 := make([]float64, dim), make([]float32, dim)
	l64 := f.net.Grad(g64, f.x, f.a, p.labels, 0.01)
	l32 := net.Grad(g32, p.x, p.a, p.labels, 0.01)
	add("Grad", g64, g32)
	names, r64, r32 = append(names, "loss"), append(r64, []float64{l64}), append(r32, []float64{l32})
	h64, h32 := make([]float64, dim), make([]float32, dim)
	f.net.HVP(h64, f.x, f.a, p.labels, 0.01, f.u)
	net.HVP(h32, p.x, p.a, p.labels, 0.01, p.u)
	add("HVP", h64, h32)
	return names, r64, r32
}

// checkPrecisions compares the float32 and float64 nets of specs on the
// first draw whose ReLUs and max pools take the same pieces in both.
func checkPrecisions(t *testing.T, in Shape, specs []Spec, classes, n int) {
	t.Helper()
	var p *precisionPair
	for seed := uint64(1); ; seed++ {
		p = newPrecisionPair(t, in, specs, classes, n, seed)
		p.results()
		if p.samePieces() {
			break
		}
		if seed == 20 {
			t.Fatal("no draw where float32 and float64 take the same pieces")
		}
	}
	tol := tol32(p.f.net, n)
	names, r64, r32 := p.results()
	for i, name := range names {
		e := relErr(r32[i], r64[i])
		if !(e <= tol) {
			t.Errorf("%s: float32 off by %.3g relative to float64, tolerance %.3g", name, e, tol)
		}
		if testing.Verbose() {
			t.Logf("%-12s %.3g (tolerance %.3g)", name, e, tol)
		}
	}
}

func TestFloat32LayersMatchFloat64(t *testing.T) {
	cases := []struct {
		name    string
		in      Shape
		specs   []Spec
		classes int
	}{
		{"conv-stride-pad", Shape{2, 9, 8}, []Spec{{Kind: KindConv2D, Out: 3, KH: 2, KW: 3, Stride: 2, Pad: 1}, Tanh(), Dense(3)}, 3},
		{"conv-rows-k5", Shape{3, 9, 8}, []Spec{Conv2D(8, 5, 1, 0), Softplus(), Conv2D(3, 3, 1, 0), Tanh(), Dense(3)}, 3},
		{"conv-rows-k144", Shape{2, 14, 14}, []Spec{Conv2D(16, 3, 1, 0), ReLU(), Conv2D(5, 3, 1, 0), MaxPool2D(2, 2), Softplus(), Dense(3)}, 3},
		{"conv-dot-k3", Shape{1, 9, 9}, []Spec{Conv2D(8, 3, 1, 0), Tanh(), Conv2D(4, 3, 1, 0), Softplus(), Flatten(), Dense(3)}, 3},
		{"dense-tanh", Shape{1, 4, 4}, []Spec{Dense(5), Tanh(), Dense(3)}, 3},
		{"dense-wide", Shape{1, 4, 4}, []Spec{Flatten(), Dense(wideOut + 3), Softplus(), Dense(3)}, 3},
		{"tanh-mlp-row-order", Shape{1, 4, 4}, TanhMLP(6, 3), 3},
		{"relu", Shape{2, 8, 8}, []Spec{Conv2D(3, 3, 1, 1), ReLU(), Dense(6), ReLU(), Dense(3)}, 3},
		{"maxpool", Shape{2, 9, 9}, []Spec{Conv2D(3, 3, 1, 0), MaxPool2D(2, 0), Tanh(), Dense(4)}, 4},
		{"maxpool-overlap", Shape{1, 8, 8}, []Spec{Conv2D(2, 3, 1, 1), MaxPool2D(3, 1), Softplus(), Dense(3)}, 3},
		{"relu-maxpool", Shape{1, 10, 10}, []Spec{Conv2D(4, 3, 1, 0), ReLU(), MaxPool2D(2, 2), Conv2D(3, 3, 1, 0), ReLU(), Dense(3)}, 3},
		{"avgpool", Shape{2, 9, 9}, []Spec{Conv2D(3, 3, 1, 0), AvgPool2D(3, 2), Softplus(), Dense(4)}, 4},
		{"groupnorm", Shape{2, 6, 6}, []Spec{Conv2D(4, 3, 1, 0), GroupNorm(2), Tanh(), Dense(3)}, 3},
		{"groupnorm-first", Shape{2, 4, 4}, []Spec{GroupNorm(1), Tanh(), Dense(3)}, 3},
		{"groupnorm-last", Shape{1, 5, 5}, []Spec{Conv2D(4, 3, 1, 0), Tanh(), Dense(12), GroupNorm(2)}, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkPrecisions(t, c.in, c.specs, c.classes, 3) })
	}
}

func TestFloat32PresetsMatchFloat64(t *testing.T) {
	inputs := map[string]Shape{"fedbio-4conv": {1, 26, 26}, "lenet": {3, 16, 16}}
	for _, name := range Presets() {
		in, ok := inputs[name]
		if !ok {
			in = Shape{1, 16, 16}
		}
		t.Run(name, func(t *testing.T) { checkPrecisions(t, in, mustPreset(t, name, in, 5), 5, 3) })
	}
	t.Run("norm-16-32", func(t *testing.T) { checkPrecisions(t, Shape{1, 28, 28}, normNet(10), 10, 2) })
}

// The float32 passes allocate nothing once the workspaces are there.
func TestFloat32NoAllocations(t *testing.T) {
	in := Shape{2, 8, 8}
	specs := []Spec{Conv2D(3, 3, 1, 1), ReLU(), MaxPool2D(2, 2), GroupNorm(1), Softplus(), AvgPool2D(2, 2), Tanh(), Flatten(), Dense(3)}
	p := newPrecisionPair(t, in, specs, 3, 3, 1)
	net, n, c, dim := p.net, p.f.n, p.f.classes, p.f.dim
	z, v, d := make([]float32, n*c), make([]float32, n*c), make([]float32, dim)
	ga := make([]float32, n*in.Size())
	net.Logits(z, p.x, p.a, n) // workspaces for the batch
	// In pass order: VJPR needs the JVP before it.
	for _, op := range []struct {
		name string
		fn   func()
	}{
		{"Logits", func() { net.Logits(z, p.x, p.a, n) }},
		{"JVP", func() { net.JVP(v, p.x, p.u) }},
		{"VJP", func() { net.VJP(d, p.x, p.g) }},
		{"VJPInput", func() { net.VJPInput(d, ga, p.x, p.g) }},
		{"VJPR", func() { net.VJPR(d, p.x, p.u, p.g, p.rg) }},
		{"VJPRInput", func() { net.VJPRInput(d, ga, p.x, p.u, p.g, p.rg) }},
		{"Grad", func() { net.Grad(d, p.x, p.a, p.labels, 0.1) }},
		{"HVP", func() { net.HVP(d, p.x, p.a, p.labels, 0.1, p.u) }},
		{"Loss", func() { net.Loss(p.x, p.a, p.labels, 0.1) }},
	} {
		if a := testing.AllocsPerRun(5, op.fn); a != 0 {
			t.Errorf("%s: %v allocations per run", op.name, a)
		}
	}
	// A smaller batch reuses the workspaces of the larger one.
	if a := testing.AllocsPerRun(5, func() { net.Logits(z[:c], p.x, p.a[:net.Input().Size()], 1) }); a != 0 {
		t.Errorf("Logits on a smaller batch: %v allocations per run", a)
	}
}

// A float32 net is as deterministic as a float64 one: the same bits at any
// GOMAXPROCS and from a Clone.
func TestFloat32Deterministic(t *testing.T) {
	p := newPrecisionPair(t, Shape{1, 16, 16}, normNet(4), 4, 5, 1)
	hvp := func(net *Net[float32], procs int) []float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		d := make([]float32, p.f.dim)
		net.HVP(d, p.x, p.a, p.labels, 0.01, p.u)
		return d
	}
	grad := func(net *Net[float32], procs int) ([]float32, float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		d := make([]float32, p.f.dim)
		l := net.Grad(d, p.x, p.a, p.labels, 0.01)
		return d, l
	}
	h1, h4, hc := hvp(p.net, 1), hvp(p.net.Clone(), 4), hvp(p.net.Clone(), 1)
	if !sameBits(h1, h4) || !sameBits(h1, hc) {
		t.Errorf("float32 HVP differs between GOMAXPROCS 1, 4 and a Clone")
	}
	g1, l1 := grad(p.net, 1)
	g4, l4 := grad(p.net.Clone(), 4)
	if !sameBits(g1, g4) || math.Float64bits(l1) != math.Float64bits(l4) {
		t.Errorf("float32 Grad differs between GOMAXPROCS 1 and 4")
	}
}

// Info.Memory counts a float32 net's buffers at 4 bytes: about half the
// float64 net's (the max pools' int32 offsets do not shrink).
func TestFloat32Memory(t *testing.T) {
	in := Shape{1, 28, 28}
	i64, err := Plan(in, normNet(10), 10)
	if err != nil {
		t.Fatal(err)
	}
	i32, err := PlanOf[float32](in, normNet(10), 10)
	if err != nil {
		t.Fatal(err)
	}
	net, _ := New[float32](in, normNet(10), 10)
	m64, m32 := i64.Memory(16), i32.Memory(16)
	if m32 >= m64*52/100 || m32 <= m64*45/100 {
		t.Errorf("float32 Memory(16) = %d, float64 %d: want about half", m32, m64)
	}
	if net.Info().Memory(16) != m32 {
		t.Errorf("Net[float32].Info().Memory(16) = %d, PlanOf[float32] %d", net.Info().Memory(16), m32)
	}
	// The estimate covers what the float32 net allocates.
	n := 16
	x := make([]float32, net.Dim())
	a := make([]float32, n*in.Size())
	labels := make([]int, n)
	var before, after runtimeMem
	before.read()
	net.HVP(make([]float32, net.Dim()), x, a, labels, 0, x)
	after.read()
	if got := after.total - before.total; got > uint64(m32)+uint64(2*4*net.Dim())+1<<16 {
		t.Errorf("a float32 batch of %d allocated %d bytes, estimate %d", n, got, m32)
	}
}

// In float32 Loss and Grad return the same f(x), bit for bit, as in
// float64: their ‖x‖² are summed in one order.
func TestLossMatchesGradLoss32(t *testing.T) {
	const n, classes, l2 = 5, 10, 1e-3
	in := Shape{1, 12, 12}
	net, err := New[float32](in, []Spec{Conv2D(4, 3, 1, 0), ReLU(), Flatten(), Dense(classes)}, classes)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, net.Dim())
	for i := range x {
		// Magnitudes over eight decades, so that the order of ‖x‖²'s
		// additions shows in its rounding.
		x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-6)))
	}
	a := make([]float32, n*in.Size())
	for i := range a {
		a[i] = float32(r.Float64())
	}
	labels := []int{0, 3, 9, 1, 4}
	g := make([]float32, net.Dim())
	loss := net.Grad(g, x, a, labels, l2)
	if l := net.Loss(x, a, labels, l2); math.Float64bits(l) != math.Float64bits(loss) {
		t.Errorf("float32 Loss %.17g, Grad's loss %.17g", l, loss)
	}
}
