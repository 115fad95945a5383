package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// fixture is a net with random parameters, data, direction and logit
// weights.
type fixture struct {
	net               *Net[float64]
	x, u, a, g, rg    []float64
	n, classes, dim   int
	smooth            bool // no ReLU or max pool
	z, v, vjp, second []float64
}

func newFixture(t *testing.T, in Shape, specs []Spec, classes, n int, seed uint64) *fixture {
	t.Helper()
	net, err := New[float64](in, specs, classes)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	f := &fixture{net: net, n: n, classes: classes, dim: net.Dim(), smooth: true}
	for _, sp := range specs {
		if sp.Kind == KindReLU || sp.Kind == KindMaxPool2D {
			f.smooth = false
		}
	}
	f.x = make([]float64, f.dim)
	net.Init(f.x, r)
	// Perturb the init so that group-norm scales and shifts are not 1 and 0
	// (their derivatives would hide terms).
	for i := range f.x {
		f.x[i] += 0.1 * r.NormFloat64()
	}
	f.u = randVec(r, f.dim, 0.3)
	f.a = randVec(r, n*in.Size(), 1)
	f.g = randVec(r, n*classes, 1)
	f.rg = randVec(r, n*classes, 1)
	f.z = make([]float64, n*classes)
	f.v = make([]float64, n*classes)
	f.vjp = make([]float64, f.dim)
	f.second = make([]float64, f.dim)
	return f
}

func randVec(r *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * r.NormFloat64()
	}
	return v
}

// run computes Z, V = JVP(u), VJP(G) and VJPR(u, G, RG) at f.x.
func (f *fixture) run() {
	f.net.Logits(f.z, f.x, f.a, f.n)
	f.net.JVP(f.v, f.x, f.u)
	clear(f.vjp)
	f.net.VJP(f.vjp, f.x, f.g)
	clear(f.second)
	f.net.VJPR(f.second, f.x, f.u, f.g, f.rg)
}

// shifted returns x + h·u.
func shifted(x, u []float64, h float64) []float64 {
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] + h*u[i]
	}
	return y
}

// logitsAt returns Z at parameters x (f.net's state is overwritten).
func (f *fixture) logitsAt(x []float64) []float64 {
	z := make([]float64, f.n*f.classes)
	f.net.Logits(z, x, f.a, f.n)
	return z
}

// vjpAt returns VJP(G) at parameters x.
func (f *fixture) vjpAt(x, g []float64) []float64 {
	f.net.Logits(make([]float64, f.n*f.classes), x, f.a, f.n)
	d := make([]float64, f.dim)
	f.net.VJP(d, x, g)
	return d
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// relErr returns ‖a − b‖/max(‖a‖, ‖b‖, tiny).
func relErr(a, b []float64) float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return norm(d) / max(norm(a), norm(b), 1e-300)
}

// kinkMargin returns the smallest ratio, over the ReLU inputs and the max
// pool windows of the last Logits and JVP, of the distance to a kink to the
// rate at which the direction u approaches it: finite differences with
// steps below it never cross a kink.
func (f *fixture) kinkMargin() float64 {
	m := math.Inf(1)
	for i, l := range f.net.layers {
		in, rin := f.net.input(i)
		if rin == nil {
			rin = make([]float64, len(in))
		}
		switch l := l.(type) {
		case *relu[float64]:
			for j, v := range in[:f.n*l.shape.Size()] {
				m = min(m, math.Abs(v)/max(math.Abs(rin[j]), 1e-300))
			}
		case *pool[float64]:
			if !l.max {
				continue
			}
			m = min(m, l.tieMargin(in, rin, f.n))
		}
	}
	return m
}

// tieMargin is kinkMargin for one max pool.
func (l *pool[F]) tieMargin(x, rx []float64, n int) float64 {
	m := math.Inf(1)
	ni, no := l.in.Size(), l.o.Size()
	for b := range n {
		xb, rb := x[b*ni:(b+1)*ni], rx[b*ni:(b+1)*ni]
		for c := range l.in.C {
			for oy := range l.o.H {
				for ox := range l.o.W {
					a := l.arg[b*no+(c*l.o.H+oy)*l.o.W+ox]
					base := c*l.in.H*l.in.W + oy*l.s*l.in.W + ox*l.s
					for ky := range l.kh {
						for kx := range l.kw {
							j := base + ky*l.in.W + kx
							if j == int(a) {
								continue
							}
							dr := math.Abs(rb[j] - rb[a])
							if dr == 0 {
								continue // equal values moving together never swap
							}
							m = min(m, (xb[a]-xb[j])/dr)
						}
					}
				}
			}
		}
	}
	return m
}

// checkDerivatives tests the four primitives of a net against finite
// differences and the adjoint identity.
func checkDerivatives(t *testing.T, in Shape, specs []Spec, classes, n int) {
	t.Helper()
	h := 1e-5
	var f *fixture
	for seed := uint64(1); ; seed++ {
		f = newFixture(t, in, specs, classes, n, seed)
		f.run()
		if f.smooth {
			break
		}
		// Piecewise-linear layers: use a step far below the distance to
		// the nearest kink, and a draw where that distance is not tiny.
		h = 1e-7
		if f.kinkMargin() > 100*h {
			break
		}
		if seed == 50 {
			t.Fatalf("no draw with a kink margin above %g", 100*h)
		}
	}
	z := append([]float64(nil), f.z...)
	v := append([]float64(nil), f.v...)
	vjp := append([]float64(nil), f.vjp...)
	second := append([]float64(nil), f.second...)

	// JVP against central differences of Logits.
	zp, zm := f.logitsAt(shifted(f.x, f.u, h)), f.logitsAt(shifted(f.x, f.u, -h))
	fd := make([]float64, len(zp))
	for i := range fd {
		fd[i] = (zp[i] - zm[i]) / (2 * h)
	}
	if e := relErr(v, fd); e > 1e-6 {
		t.Errorf("JVP: relative error %.3g against central differences", e)
	}
	if e := relErr(z, f.logitsAt(f.x)); e != 0 {
		t.Errorf("Logits not reproducible: %.3g", e)
	}

	// VJP: the adjoint identity ⟨V, G⟩ = ⟨u, VJP(G)⟩ and central differences
	// of ⟨G, Z(x)⟩ along u and along a few coordinates.
	lhs, rhs := dot(v, f.g), dot(f.u, vjp)
	if math.Abs(lhs-rhs) > 1e-10*max(math.Abs(lhs), 1) {
		t.Errorf("adjoint: ⟨V, G⟩ = %.15g, ⟨u, VJP(G)⟩ = %.15g", lhs, rhs)
	}
	dd := (dot(f.g, zp) - dot(f.g, zm)) / (2 * h)
	if math.Abs(dd-rhs) > 1e-6*max(math.Abs(rhs), 1) {
		t.Errorf("VJP: ⟨u, VJP(G)⟩ = %.12g, central difference of ⟨G, Z⟩ %.12g", rhs, dd)
	}
	if f.smooth {
		r := rand.New(rand.NewPCG(3, 3))
		for range 8 {
			i := r.IntN(f.dim)
			e := make([]float64, f.dim)
			e[i] = 1
			d := (dot(f.g, f.logitsAt(shifted(f.x, e, h))) - dot(f.g, f.logitsAt(shifted(f.x, e, -h)))) / (2 * h)
			if math.Abs(d-vjp[i]) > 1e-6*max(math.Abs(vjp[i]), 1) {
				t.Errorf("VJP[%d] = %.12g, central difference %.12g", i, vjp[i], d)
			}
		}
	}

	// VJPR against central differences of VJP along (u, RG).
	gp, gm := shifted(f.g, f.rg, h), shifted(f.g, f.rg, -h)
	vp, vm := f.vjpAt(shifted(f.x, f.u, h), gp), f.vjpAt(shifted(f.x, f.u, -h), gm)
	for i := range vp {
		vp[i] = (vp[i] - vm[i]) / (2 * h)
	}
	if e := relErr(second, vp); e > 1e-6 {
		t.Errorf("VJPR: relative error %.3g against central differences of VJP", e)
	}
	// The second-order part alone (RG = 0) must be checked too: with RG ≠ 0
	// the first-order part J^T RG could hide an error in it.
	f.net.Logits(f.z, f.x, f.a, f.n)
	f.net.JVP(f.v, f.x, f.u)
	zero := make([]float64, len(f.rg))
	s2 := make([]float64, f.dim)
	f.net.VJPR(s2, f.x, f.u, f.g, zero)
	vp, vm = f.vjpAt(shifted(f.x, f.u, h), f.g), f.vjpAt(shifted(f.x, f.u, -h), f.g)
	for i := range vp {
		vp[i] = (vp[i] - vm[i]) / (2 * h)
	}
	if e := relErr(s2, vp); e > 1e-5 {
		t.Errorf("VJPR with RG = 0: relative error %.3g against central differences of VJP (‖·‖ = %.3g)", e, norm(s2))
	}
}

func TestLayerDerivatives(t *testing.T) {
	cases := []struct {
		name    string
		in      Shape
		specs   []Spec
		classes int
	}{
		{"conv-tanh", Shape{2, 8, 8}, []Spec{Conv2D(3, 3, 1, 1), Tanh(), Flatten(), Dense(4)}, 4},
		{"conv-stride-rect", Shape{2, 9, 8}, []Spec{{Kind: KindConv2D, Out: 3, KH: 2, KW: 3, Stride: 2, Pad: 1}, Softplus(), Dense(3)}, 3},
		{"conv-conv", Shape{1, 8, 8}, []Spec{Conv2D(2, 3, 1, 0), Tanh(), Conv2D(3, 3, 2, 1), Tanh(), Dense(3)}, 3},
		{"conv-8", Shape{2, 6, 6}, []Spec{Conv2D(8, 3, 1, 1), Tanh(), Conv2D(8, 3, 2, 0), Softplus(), Dense(3)}, 3},
		{"conv-only", Shape{2, 5, 5}, []Spec{Conv2D(2, 3, 1, 0), Conv2D(1, 3, 1, 0)}, 1},
		{"dense-tanh", Shape{1, 4, 4}, []Spec{Dense(5), Tanh(), Dense(3)}, 3},
		{"dense-softplus", Shape{2, 3, 3}, []Spec{Flatten(), Dense(6), Softplus(), Dense(3)}, 3},
		{"tanh-first", Shape{2, 3, 3}, []Spec{Tanh(), Flatten(), Dense(3), Tanh()}, 3},
		{"softplus-first", Shape{2, 3, 3}, []Spec{Softplus(), Dense(3), Softplus()}, 3},
		{"relu", Shape{2, 8, 8}, []Spec{Conv2D(3, 3, 1, 1), ReLU(), Dense(6), ReLU(), Dense(3)}, 3},
		{"relu-first", Shape{1, 6, 6}, []Spec{ReLU(), Dense(3)}, 3},
		{"maxpool", Shape{2, 9, 9}, []Spec{Conv2D(3, 3, 1, 0), MaxPool2D(2, 0), Tanh(), Dense(4)}, 4},
		{"maxpool-overlap", Shape{1, 8, 8}, []Spec{Conv2D(2, 3, 1, 1), MaxPool2D(3, 1), Softplus(), Dense(3)}, 3},
		{"maxpool-first", Shape{2, 6, 6}, []Spec{MaxPool2D(2, 2), Dense(3), Tanh()}, 3},
		{"relu-maxpool", Shape{1, 10, 10}, []Spec{Conv2D(4, 3, 1, 0), ReLU(), MaxPool2D(2, 2), Conv2D(3, 3, 1, 0), ReLU(), Dense(3)}, 3},
		{"avgpool", Shape{2, 9, 9}, []Spec{Conv2D(3, 3, 1, 0), AvgPool2D(3, 2), Softplus(), Dense(4)}, 4},
		{"avgpool-first", Shape{2, 6, 6}, []Spec{AvgPool2D(2, 0), Tanh(), Dense(3)}, 3},
		{"groupnorm", Shape{2, 6, 6}, []Spec{Conv2D(4, 3, 1, 0), GroupNorm(2), Tanh(), Dense(3)}, 3},
		{"groupnorm-layer", Shape{2, 6, 6}, []Spec{Conv2D(4, 3, 1, 0), GroupNorm(1), Softplus(), Dense(3)}, 3},
		{"groupnorm-instance", Shape{2, 6, 6}, []Spec{Conv2D(4, 3, 1, 0), GroupNorm(4), Tanh(), Dense(3)}, 3},
		{"groupnorm-first", Shape{2, 4, 4}, []Spec{GroupNorm(1), Tanh(), Dense(3)}, 3},
		{"groupnorm-last", Shape{1, 5, 5}, []Spec{Conv2D(4, 3, 1, 0), Tanh(), Dense(4), GroupNorm(2)}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkDerivatives(t, c.in, c.specs, c.classes, 3) })
	}
}

func TestCrossEntropy(t *testing.T) {
	in := Shape{2, 6, 6}
	specs := []Spec{Conv2D(3, 3, 1, 0), GroupNorm(1), Tanh(), AvgPool2D(2, 2), Dense(4)}
	f := newFixture(t, in, specs, 4, 3, 5)
	labels := []int{2, 0, 3}
	l2 := 0.05
	net := f.net
	g := make([]float64, f.dim)
	loss := net.Grad(g, f.x, f.a, labels, l2)
	if l := net.Loss(f.x, f.a, labels, l2); l != loss {
		t.Errorf("Loss %.17g, Grad's loss %.17g", l, loss)
	}
	hv := make([]float64, f.dim)
	net.HVP(hv, f.x, f.a, labels, l2, f.u)
	h := 1e-5
	d := (net.Loss(shifted(f.x, f.u, h), f.a, labels, l2) - net.Loss(shifted(f.x, f.u, -h), f.a, labels, l2)) / (2 * h)
	if gu := dot(g, f.u); math.Abs(d-gu) > 1e-7*max(math.Abs(gu), 1) {
		t.Errorf("⟨∇f, u⟩ = %.12g, central difference %.12g", gu, d)
	}
	gp, gm := make([]float64, f.dim), make([]float64, f.dim)
	net.Grad(gp, shifted(f.x, f.u, h), f.a, labels, l2)
	net.Grad(gm, shifted(f.x, f.u, -h), f.a, labels, l2)
	for i := range gp {
		gp[i] = (gp[i] - gm[i]) / (2 * h)
	}
	if e := relErr(hv, gp); e > 1e-6 {
		t.Errorf("HVP: relative error %.3g against central differences of Grad", e)
	}
	// Symmetry: ⟨w, H u⟩ = ⟨u, H w⟩.
	w := randVec(rand.New(rand.NewPCG(9, 9)), f.dim, 0.3)
	hw := make([]float64, f.dim)
	net.HVP(hw, f.x, f.a, labels, l2, w)
	if a, b := dot(w, hv), dot(f.u, hw); math.Abs(a-b) > 1e-10*max(math.Abs(a), 1) {
		t.Errorf("HVP not symmetric: ⟨w, Hu⟩ = %.15g, ⟨u, Hw⟩ = %.15g", a, b)
	}
}

func TestCloneIndependent(t *testing.T) {
	in := Shape{2, 8, 8}
	specs := []Spec{Conv2D(3, 3, 1, 1), ReLU(), MaxPool2D(2, 2), GroupNorm(3), Tanh(), Dense(3)}
	f := newFixture(t, in, specs, 3, 3, 2)
	f.run()
	want := [][]float64{append([]float64(nil), f.z...), append([]float64(nil), f.v...),
		append([]float64(nil), f.vjp...), append([]float64(nil), f.second...)}

	c := f.net.Clone()
	// Use the clone on other data and a larger batch between the original's
	// passes: the original must not notice.
	r := rand.New(rand.NewPCG(4, 4))
	n := 5
	a2, x2, u2 := randVec(r, n*in.Size(), 1), randVec(r, f.dim, 1), randVec(r, f.dim, 1)
	z2, v2 := make([]float64, n*3), make([]float64, n*3)
	d2 := make([]float64, f.dim)
	f.net.Logits(f.z, f.x, f.a, f.n)
	c.Logits(z2, x2, a2, n)
	f.net.JVP(f.v, f.x, f.u)
	c.JVP(v2, x2, u2)
	clear(f.vjp)
	f.net.VJP(f.vjp, f.x, f.g)
	c.VJP(d2, x2, randVec(r, n*3, 1))
	clear(f.second)
	f.net.VJPR(f.second, f.x, f.u, f.g, f.rg)
	c.VJPR(d2, x2, u2, randVec(r, n*3, 1), randVec(r, n*3, 1))
	for i, got := range [][]float64{f.z, f.v, f.vjp, f.second} {
		for j := range got {
			if got[j] != want[i][j] {
				t.Fatalf("pass %d changed after using a clone: element %d %.17g, was %.17g", i, j, got[j], want[i][j])
			}
		}
	}
	if c.Dim() != f.net.Dim() || c.Classes() != 3 {
		t.Errorf("clone's shape differs")
	}
}

func TestNoAllocations(t *testing.T) {
	in := Shape{2, 8, 8}
	specs := []Spec{Conv2D(3, 3, 1, 1), ReLU(), MaxPool2D(2, 2), GroupNorm(1), Softplus(), AvgPool2D(2, 2), Tanh(), Flatten(), Dense(3)}
	f := newFixture(t, in, specs, 3, 3, 1)
	f.run()
	labels := []int{0, 1, 2}
	g := make([]float64, f.dim)
	for name, fn := range map[string]func(){
		"Logits": func() { f.net.Logits(f.z, f.x, f.a, f.n) },
		"JVP":    func() { f.net.JVP(f.v, f.x, f.u) },
		"VJP":    func() { f.net.VJP(f.vjp, f.x, f.g) },
		"VJPR":   func() { f.net.VJPR(f.second, f.x, f.u, f.g, f.rg) },
		"Grad":   func() { f.net.Grad(g, f.x, f.a, labels, 0.1) },
		"HVP":    func() { f.net.HVP(g, f.x, f.a, labels, 0.1, f.u) },
	} {
		if a := testing.AllocsPerRun(5, fn); a != 0 {
			t.Errorf("%s: %v allocations per run", name, a)
		}
	}
	// A smaller batch reuses the workspaces of the larger one.
	if a := testing.AllocsPerRun(5, func() { f.net.Logits(f.z[:3], f.x, f.a[:in.Size()], 1) }); a != 0 {
		t.Errorf("Logits on a smaller batch: %v allocations per run", a)
	}
}

func TestShapeErrors(t *testing.T) {
	in := Shape{1, 8, 8}
	for _, c := range []struct {
		name    string
		in      Shape
		specs   []Spec
		classes int
		want    string
	}{
		{"no layers", in, nil, 3, "no layers"},
		{"bad input", Shape{0, 8, 8}, []Spec{Dense(3)}, 3, "positive"},
		{"bad classes", in, []Spec{Dense(3)}, 0, "classes"},
		{"wrong output", in, []Spec{Dense(4)}, 3, "want 3 classes"},
		{"kernel too large", in, []Spec{Conv2D(2, 9, 1, 0), Dense(3)}, 3, "larger than"},
		{"zero channels", in, []Spec{Conv2D(0, 3, 1, 0), Dense(3)}, 3, "output channels"},
		{"zero kernel", in, []Spec{Conv2D(2, 0, 1, 0), Dense(3)}, 3, "positive"},
		{"negative stride", in, []Spec{Conv2D(2, 3, -1, 0), Dense(3)}, 3, "stride"},
		{"negative padding", in, []Spec{Conv2D(2, 3, 1, -1), Dense(3)}, 3, "padding"},
		{"padding ≥ kernel", in, []Spec{Conv2D(2, 3, 1, 3), Dense(3)}, 3, "padding"},
		{"pool too large", in, []Spec{MaxPool2D(9, 1), Dense(3)}, 3, "larger than"},
		{"pool after shrink", in, []Spec{Conv2D(2, 5, 1, 0), MaxPool2D(2, 2), MaxPool2D(3, 3), Dense(3)}, 3, "larger than"},
		{"zero dense", in, []Spec{Dense(0)}, 3, "outputs"},
		{"groups", Shape{3, 4, 4}, []Spec{GroupNorm(2), Dense(3)}, 3, "groups"},
		{"too many parameters", in, []Spec{Dense(1 << 22), Dense(3)}, 3, "parameters"},
		{"huge activation", in, []Spec{Dense(MaxActivation + 1), Dense(3)}, 3, "outputs"},
		{"huge kernel padding", in, []Spec{Conv2D(2, 1<<30, 1, 1<<30-1), Dense(3)}, 3, "kernel"},
		{"unknown kind", in, []Spec{{Kind: 99}}, 3, "unknown"},
		{"pool window not square", in, []Spec{{Kind: KindMaxPool2D, KH: 2, KW: 3}, Dense(3)}, 3, "square"},
	} {
		_, err := New[float64](c.in, c.specs, c.classes)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
		if _, perr := Plan(c.in, c.specs, c.classes); (perr == nil) != (err == nil) {
			t.Errorf("%s: Plan and New disagree", c.name)
		}
	}
}

func TestMemoryEstimate(t *testing.T) {
	specs := normNet(10)
	info, err := Plan(Shape{1, 28, 28}, specs, 10)
	if err != nil {
		t.Fatal(err)
	}
	if m1, m2 := info.Memory(1), info.Memory(2); m1 <= 0 || m2 <= m1 {
		t.Errorf("Memory(1) = %d, Memory(2) = %d: want positive and growing", m1, m2)
	}
	// The estimate covers what a Net allocates for a batch.
	net, _ := New[float64](Shape{1, 28, 28}, specs, 10)
	x := make([]float64, net.Dim())
	net.Init(x, rand.New(rand.NewPCG(1, 1)))
	n := 16
	a := make([]float64, n*784)
	labels := make([]int, n)
	var before, after runtimeMem
	before.read()
	net.HVP(make([]float64, net.Dim()), x, a, labels, 0, x)
	after.read()
	if got := after.total - before.total; got > uint64(info.Memory(n))+uint64(2*8*net.Dim())+1<<16 {
		t.Errorf("a batch of %d allocated %d bytes, estimate %d", n, got, info.Memory(n))
	}
}

type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}
