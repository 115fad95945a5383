package models

import (
	"math"
	"slices"
	"strings"
	"testing"

	"hgpsim/models/nn"
)

// smallHyperLayers is a net on 1×5×5 rows with 3 classes: conv 2 3×3 →
// 2×3×3, σ, [max pool 3 with ReLU], dense 5, σ, dense 4, σ, dense 3, with σ
// = ReLU or a smooth mix of tanh and softplus (for finite differences).
func smallHyperLayers(relu bool) []nn.Spec {
	if relu {
		return []nn.Spec{nn.Conv2D(3, 3, 1, 1), nn.ReLU(), nn.MaxPool2D(2, 2), nn.Flatten(),
			nn.Dense(5), nn.ReLU(), nn.Dense(4), nn.ReLU(), nn.Dense(3)}
	}
	return []nn.Spec{nn.Conv2D(2, 3, 1, 0), nn.Tanh(), nn.Flatten(),
		nn.Dense(5), nn.Softplus(), nn.Dense(4), nn.Tanh(), nn.Dense(3)}
}

// smallHyperRep is the HyperRep of smallHyperLayers with k inner layers.
func smallHyperRep(relu bool, k int, mu float64) *HyperRep[float64] {
	m, err := NewCNNHyperRep[float64](nn.Shape{C: 1, H: 5, W: 5}, smallHyperLayers(relu), 3, k, mu)
	if err != nil {
		panic(err)
	}
	return m
}

// TestCutHyperRepMatchesFullNet checks, on a ReLU net with max pooling
// (where finite differences do not apply at the kinks), that every product
// is the corresponding block of the whole net's gradient and
// Hessian-vector product, the net's parameters being (λ, x).
func TestCutHyperRepMatchesFullNet(t *testing.T) {
	const mu = 0.03
	in := nn.Shape{C: 1, H: 5, W: 5}
	// k = 3 leaves the body ending in the flatten after the max pool.
	for _, k := range []int{1, 2, 3} {
		r := testRand(t, 810+uint64(k))
		m := smallHyperRep(true, k, mu)
		full, err := nn.New[float64](in, smallHyperLayers(true), 3)
		if err != nil {
			t.Fatal(err)
		}
		nl, nx := m.DimLambda(), m.DimX()
		if nl+nx != full.Dim() {
			t.Fatalf("k=%d: d_λ + d_x = %d + %d, the net has %d", k, nl, nx, full.Dim())
		}
		d := randomData(r, 70, 25, 3) // two chunks
		idx := []int{4, 0, 69, 7, 7, 33, 12, 65, 64, 63, 2, 1, 0, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 3, 5, 6, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 34, 35, 36, 37, 38, 39}
		p := make([]float64, full.Dim())
		full.Init(p, r)
		lam, x := p[:nl], p[nl:]
		u := randomVec(r, nx, 1)
		A := make([]float64, len(idx)*d.D)
		d.Gather(A, idx)
		labels := make([]int, len(idx))
		for b, i := range idx {
			labels[b] = d.Y[i]
		}

		g := make([]float64, full.Dim())
		loss := full.Grad(g, p, A, labels, 0)
		ox, ol := make([]float64, nx), make([]float64, nl)
		if f := m.OuterGrad(ox, ol, x, lam, d, idx); math.Abs(f-loss) > 1e-14*loss {
			t.Errorf("k=%d: OuterGrad f = %v, the net's loss %v", k, f, loss)
		}
		closeTo(t, "OuterGrad λ", ol, g[:nl])
		closeTo(t, "OuterGrad x", ox, g[nl:])
		gx := make([]float64, nx)
		m.InnerGrad(gx, x, lam, d, idx)
		for i := range gx {
			gx[i] -= mu * x[i]
		}
		closeTo(t, "InnerGrad", gx, g[nl:])

		dir := make([]float64, full.Dim())
		copy(dir[nl:], u)
		hv := make([]float64, full.Dim())
		full.HVP(hv, p, A, labels, 0, dir)
		cr := make([]float64, nl)
		m.InnerCross(cr, x, lam, d, idx, u)
		closeTo(t, "InnerCross", cr, hv[:nl])
		hx := make([]float64, nx)
		m.InnerHVP(hx, x, lam, d, idx, u)
		for i := range hx {
			hx[i] -= mu * u[i]
		}
		closeTo(t, "InnerHVP", hx, hv[nl:])

		if acc, want := m.Accuracy(x, lam, d, idx), fullAccuracy(full, p, A, labels); acc != want {
			t.Errorf("k=%d: accuracy %v, the net's %v", k, acc, want)
		}
	}
}

// closeTo fails unless got and want agree to rounding.
func closeTo(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if e := relErr(got, want); e > 1e-12 || math.IsNaN(e) {
		t.Errorf("%s: relative error %.3g against the whole net", what, e)
	}
}

func fullAccuracy(net *nn.Net[float64], p, A []float64, labels []int) float64 {
	c := net.Classes()
	z := make([]float64, len(labels)*c)
	net.Logits(z, p, A, len(labels))
	right := 0
	for b, y := range labels {
		if argmax(z[b*c:(b+1)*c]) == y {
			right++
		}
	}
	return float64(right) / float64(len(labels))
}

// TestCutHyperRepCache checks that the feature cache gives the bits a fresh
// value computes: after λ changes (a new slice or the same one written in
// place), across datasets, and whichever batches filled it.
func TestCutHyperRepCache(t *testing.T) {
	r := testRand(t, 820)
	m := smallHyperRep(true, 2, 0.01)
	train, val := randomData(r, 90, 25, 3), randomData(r, 30, 25, 3)
	lam := make([]float64, m.DimLambda())
	m.InitLambda(lam, r)
	x := make([]float64, m.DimX())
	m.Init(x, r)
	u := randomVec(r, m.DimX(), 1)
	idx := []int{5, 80, 3, 3, 17, 60, 61}

	type result struct {
		loss, acc, outer float64
		g, hv, cr, ol    []float64
	}
	eval := func(m *HyperRep[float64], lam []float64) result {
		var res result
		res.g = make([]float64, m.DimX())
		res.hv = make([]float64, m.DimX())
		res.cr = make([]float64, m.DimLambda())
		res.ol = make([]float64, m.DimLambda())
		res.loss = m.InnerGrad(res.g, x, lam, train, idx)
		m.InnerHVP(res.hv, x, lam, train, idx, u)
		res.acc = m.Accuracy(x, lam, val, nil)
		res.outer = m.OuterGrad(nil, res.ol, x, lam, val, []int{29, 0, 3, 3})
		m.InnerCross(res.cr, x, lam, train, idx, u)
		return res
	}
	same := func(what string, a, b result) {
		t.Helper()
		if a.loss != b.loss || a.acc != b.acc || a.outer != b.outer ||
			!slices.Equal(a.g, b.g) || !slices.Equal(a.hv, b.hv) || !slices.Equal(a.cr, b.cr) || !slices.Equal(a.ol, b.ol) {
			t.Errorf("%s: the cached model differs from a fresh one", what)
		}
	}
	fresh := func(lam []float64) result { return eval(m.Clone().(*HyperRep[float64]), lam) }

	// Warm the cache on other batches, then the batch of the test.
	m.InnerLoss(x, lam, train, nil)
	m.InnerLoss(x, lam, train, []int{80, 79})
	m.Accuracy(x, lam, val, []int{0, 1, 2})
	same("warm", eval(m, lam), fresh(lam))

	lam2 := slices.Clone(lam)
	for i := range lam2 {
		lam2[i] += 0.05 * r.NormFloat64()
	}
	a := eval(m, lam2)
	same("new λ", a, fresh(lam2))
	if b := fresh(lam); a.loss == b.loss {
		t.Error("the loss did not change with λ: the test is not testing the cache")
	}
	// The same slice written in place.
	copy(lam, lam2)
	lam[0] += 0.1
	same("λ written in place", eval(m, lam), fresh(lam))
	// A fourth and fifth dataset push the first ones out of the cache.
	for k := range 3 {
		m.InnerLoss(x, lam, randomData(r, 4+k, 25, 3), nil)
	}
	same("after eviction", eval(m, lam), fresh(lam))
}

// TestSplitHyperRep checks the split of LeNet and the errors for stacks
// that cannot be split.
func TestSplitHyperRep(t *testing.T) {
	in := nn.Shape{C: 3, H: 32, W: 32}
	lenet, err := nn.Preset("lenet", in, 10)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewCNNHyperRep[float64](in, lenet, 10, DefaultInnerLayers, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	// x: dense 120 → 84 and 84 → 10; λ: the other 62,006 − 11,014.
	if m.DimX() != 84*120+84+10*84+10 || m.DimLambda() != 62006-11014 || m.feat != 120 {
		t.Errorf("lenet: d_x = %d, d_λ = %d, features %d; want 11014, 50992, 120", m.DimX(), m.DimLambda(), m.feat)
	}
	fedbio, err := nn.Preset("fedbio-4conv", nn.Shape{C: 1, H: 28, W: 28}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		in     nn.Shape
		layers []nn.Spec
		k      int
		want   string
	}{
		{"k=0", in, lenet, 0, "at least 1"},
		{"every layer inner", in, lenet, 5, "at least one must remain in the body"},
		{"more than the net", in, lenet, 9, "at least one must remain in the body"},
		{"conv in the tail", nn.Shape{C: 1, H: 28, W: 28}, fedbio, 2, "layer 8 is conv2d"},
		{"invalid stack", in, lenet[:3], 1, "nn:"},
	} {
		_, err := NewCNNHyperRep[float64](tc.in, tc.layers, 10, tc.k, 0.01)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewCNNHyperRep[float64](nn.Shape{C: 1, H: 28, W: 28}, fedbio, 10, 1, 0.01); err != nil {
		t.Errorf("fedbio-4conv with its dense layer inner: %v", err)
	}
}
