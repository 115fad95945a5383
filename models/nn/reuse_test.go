package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// VJPR reuses the backpropagation of G from an earlier VJP or VJPR at the
// same Logits with the same G, and only then: the results are the same bits
// as a fresh computation.
func TestVJPRReuse(t *testing.T) {
	in := Shape{2, 8, 8}
	specs := []Spec{Conv2D(8, 3, 1, 1), ReLU(), MaxPool2D(2, 2), GroupNorm(2), Tanh(), Dense(5), Softplus(), Dense(3)}
	f := newFixture(t, in, specs, 3, 3, 3)
	r := rand.New(rand.NewPCG(8, 8))
	u2, g2 := randVec(r, f.dim, 0.3), randVec(r, f.n*3, 1)
	x2 := shifted(f.x, f.u, 0.1)

	fresh := func(x, u, g []float64) []float64 {
		c := f.net.Clone()
		c.Logits(f.z, x, f.a, f.n)
		c.JVP(f.v, x, u)
		d := make([]float64, f.dim)
		c.VJPR(d, x, u, g, f.rg)
		return d
	}
	check := func(what string, got, want []float64) {
		t.Helper()
		if !sameBits(got, want) {
			t.Errorf("%s: VJPR differs from a fresh computation (relative %.3g)", what, relErr(got, want))
		}
	}
	vjpr := func(x, u, g []float64) []float64 {
		d := make([]float64, f.dim)
		f.net.VJPR(d, x, u, g, f.rg)
		return d
	}

	net := f.net
	net.Logits(f.z, f.x, f.a, f.n)
	net.JVP(f.v, f.x, f.u)
	net.VJP(make([]float64, f.dim), f.x, f.g)
	check("after VJP with the same G", vjpr(f.x, f.u, f.g), fresh(f.x, f.u, f.g))
	check("after VJP with another G", vjpr(f.x, f.u, g2), fresh(f.x, f.u, g2))
	net.JVP(f.v, f.x, u2)
	check("second direction", vjpr(f.x, u2, g2), fresh(f.x, u2, g2))
	net.Logits(f.z, x2, f.a, f.n)
	net.JVP(f.v, x2, u2)
	check("after Logits at another x", vjpr(x2, u2, g2), fresh(x2, u2, g2))
}

// A ReLU directly before a max pool is computed after it; computing it
// before, as specified, gives the same bits in every pass.
func TestPoolBeforeReLUExact(t *testing.T) {
	in := Shape{2, 9, 9}
	specs := []Spec{Conv2D(8, 3, 1, 0), ReLU(), MaxPool2D(2, 2), Conv2D(3, 2, 1, 1), ReLU(), MaxPool2D(3, 1), Dense(3)}
	f := newFixture(t, in, specs, 3, 4, 1)
	if _, ok := f.net.layers[1].(*pool[float64]); !ok {
		t.Fatalf("layer 1 is %T, want the max pool moved before the ReLU", f.net.layers[1])
	}
	f.run()
	// The same net with the layers in the specified order.
	spec, err := New[float64](in, specs, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := Shape{2, 9, 9}
	for i, sp := range specs {
		l, err := newLayer[float64](sp, s)
		if err != nil {
			t.Fatal(err)
		}
		spec.layers[i], spec.info.shapes[i] = l, l.out()
		s = l.out()
	}
	z, v := make([]float64, len(f.z)), make([]float64, len(f.v))
	vjp, second := make([]float64, f.dim), make([]float64, f.dim)
	spec.Logits(z, f.x, f.a, f.n)
	spec.JVP(v, f.x, f.u)
	spec.VJP(vjp, f.x, f.g)
	spec.VJPR(second, f.x, f.u, f.g, f.rg)
	for i, p := range [][2][]float64{{f.z, z}, {f.v, v}, {f.vjp, vjp}, {f.second, second}} {
		if !sameBits(p[0], p[1]) {
			t.Errorf("pass %d: pool-first and ReLU-first differ (relative %.3g)", i, relErr(p[0], p[1]))
		}
	}
}

// Nothing inside a Net runs in parallel, so GOMAXPROCS cannot change a bit.
func TestGOMAXPROCSIndependent(t *testing.T) {
	in := Shape{1, 16, 16}
	specs := normNet(4)
	f := newFixture(t, in, specs, 4, 5, 1)
	labels := []int{0, 1, 2, 3, 0}
	hvp := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		d := make([]float64, f.dim)
		f.net.Clone().HVP(d, f.x, f.a, labels, 0.01, f.u)
		return d
	}
	if a, b := hvp(1), hvp(4); !sameBits(a, b) {
		t.Errorf("HVP differs between GOMAXPROCS 1 and 4 (relative %.3g)", relErr(a, b))
	}
}

// Init follows PyTorch's defaults: weights and biases of convolutions and
// dense layers uniform on ±1/√fan_in, group-norm scales 1 and shifts 0.
func TestInit(t *testing.T) {
	in := Shape{1, 28, 28}
	net, err := New[float64](in, normNet(10), 10)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, net.Dim())
	net.Init(x, rand.New(rand.NewPCG(1, 2)))
	info := net.Info()
	fanIn := map[int]int{0: 25, 4: 400, 9: 512} // layer index → inputs per output
	for i, sp := range normNet(10) {
		w := x[info.Offsets[i]:info.Offsets[i+1]]
		switch sp.Kind {
		case KindConv2D, KindDense:
			bound := 1 / math.Sqrt(float64(fanIn[i]))
			var big float64
			for _, v := range w {
				big = max(big, math.Abs(v))
			}
			if big > bound || big < 0.9*bound {
				t.Errorf("layer %d (%v): largest |w| %.4g, want just below %.4g", i, sp.Kind, big, bound)
			}
		case KindGroupNorm:
			c := len(w) / 2
			for j, v := range w {
				if want := float64(1 - j/c); v != want {
					t.Fatalf("group norm parameters %v, want %d ones then %d zeros", w, c, c)
				}
			}
		}
	}
	y := make([]float64, net.Dim())
	net.Init(y, rand.New(rand.NewPCG(1, 2)))
	if !sameBits(x, y) {
		t.Error("Init is not reproducible from the same stream")
	}
}

// normNet is a mid-size stack with group norms (two 5×5 convolutions of 16
// and 32 channels, 18,474 parameters on 1×28×28 with 10 classes), for the
// tests that need every layer kind of a preset at a realistic size.
func normNet(classes int) []Spec {
	return []Spec{
		Conv2D(16, 5, 1, 0), GroupNorm(1), ReLU(), MaxPool2D(2, 2),
		Conv2D(32, 5, 1, 0), GroupNorm(1), ReLU(), MaxPool2D(2, 2),
		Flatten(), Dense(classes),
	}
}
