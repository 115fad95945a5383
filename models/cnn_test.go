package models

import (
	"math"
	"strings"
	"testing"

	"hgpsim/models/nn"
)

// smallCNN is a convolutional classifier on 1×4×4 rows with 4 classes,
// smooth (tanh, average pooling) so that finite differences apply
// everywhere: conv 2 3×3 → 2×2×2, tanh, average pool 2 → 2×1×1, dense 4.
func smallCNN(l2 float64) *Net[float64] {
	m, err := NewNet[float64](nn.Shape{C: 1, H: 4, W: 4},
		[]nn.Spec{nn.Conv2D(2, 3, 1, 0), nn.Tanh(), nn.AvgPool2D(2, 2), nn.Flatten(), nn.Dense(4)}, 4, l2)
	if err != nil {
		panic(err)
	}
	return m
}

func TestCNNMatchesFiniteDifferences(t *testing.T) {
	r := testRand(t, 71)
	m := smallCNN(0.05)
	d := randomData(r, 19, 16, 4)
	x := randomVec(r, m.Dim(), 1)
	u := randomVec(r, m.Dim(), 1)
	for bname, idx := range batches(d.N) {
		g := make([]float64, m.Dim())
		f := m.Grad(g, x, d, idx)
		if want := m.Loss(x, d, idx); math.Abs(f-want) > 1e-14*math.Abs(want) {
			t.Errorf("%s: Grad returned %v, Loss gives %v", bname, f, want)
		}
		fd := make([]float64, m.Dim())
		xp := append([]float64(nil), x...)
		for i := range x {
			xp[i] = x[i] + fdStep
			fp := m.Loss(xp, d, idx)
			xp[i] = x[i] - fdStep
			fm := m.Loss(xp, d, idx)
			xp[i] = x[i]
			fd[i] = (fp - fm) / (2 * fdStep)
		}
		checkRel(t, bname+" Grad", g, fd)

		hv := make([]float64, m.Dim())
		m.HVP(hv, x, d, idx, u)
		gp, gm := make([]float64, m.Dim()), make([]float64, m.Dim())
		xm := make([]float64, m.Dim())
		for i := range x {
			xp[i], xm[i] = x[i]+fdStep*u[i], x[i]-fdStep*u[i]
		}
		m.Grad(gp, xp, d, idx)
		m.Grad(gm, xm, d, idx)
		for i := range gp {
			gp[i] = (gp[i] - gm[i]) / (2 * fdStep)
		}
		copy(xp, x)
		checkRel(t, bname+" HVP", hv, gp)
	}
}

// TestCNNIsTheNet checks that the classifier's loss, gradient and product
// are the net's own mean cross-entropy ones, bit for bit, on a batch larger
// than one chunk.
func TestCNNIsTheNet(t *testing.T) {
	r := testRand(t, 72)
	m := smallCNN(0.03)
	net := m.proto.Clone()
	d := randomData(r, batchChunk+37, 16, 4)
	x, u := randomVec(r, m.Dim(), 1), randomVec(r, m.Dim(), 1)
	got, want := make([]float64, m.Dim()), make([]float64, m.Dim())
	for _, idx := range [][]int{nil, {3, 1, 4, 1, 5}} {
		A, labels := d.X, d.Y
		if idx != nil {
			A = make([]float64, len(idx)*d.D)
			d.Gather(A, idx)
			labels = make([]int, len(idx))
			for k, i := range idx {
				labels[k] = d.Y[i]
			}
		}
		fg := m.Grad(got, x, d, idx)
		fw := net.Grad(want, x, A, labels, m.l2)
		// The classifier sums over chunks of rows, the net over the whole
		// batch: the gradients may differ in the last bits, not more.
		if math.Abs(fg-fw) > 1e-13*math.Abs(fw) || relErr(got, want) > 1e-12 {
			t.Errorf("idx %v: loss %v vs the net's %v, gradient relative difference %.3g", idx, fg, fw, relErr(got, want))
		}
		m.HVP(got, x, d, idx, u)
		net.HVP(want, x, A, labels, m.l2, u)
		if e := relErr(got, want); e > 1e-12 {
			t.Errorf("idx %v: HVP relative difference %.3g from the net's", idx, e)
		}
	}
}

func TestCNNSpec(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     CNNSpec
		features int
		want     string // error substring; "" for valid
		dim      int64
	}{
		{"fedem preset", CNNSpec{Preset: "fedem-cnn"}, 784, "", 2_171_786},
		{"fedbio preset", CNNSpec{Preset: "fedbio-4conv"}, 784, "", 112_074},
		{"node preset", CNNSpec{Preset: "node-weighting"}, 784, "", 363},
		{"node preset on colour", CNNSpec{Preset: "node-weighting"}, 3072, "", 1488},
		{"lenet preset on colour", CNNSpec{Preset: "lenet"}, 3072, "", 62_006},
		{"explicit input", CNNSpec{Input: []int{1, 4, 4}, Layers: []LayerSpec{{Kind: "flatten"}, {Kind: "dense", Out: 10}}}, 16, "", 170},
		{"layers", CNNSpec{Layers: []LayerSpec{{Kind: "conv2d", Out: 2, Kernel: 3, Padding: 1}, {Kind: "relu"}, {Kind: "maxpool2d", Kernel: 2}, {Kind: "dense", Out: 10}}}, 16, "", 2*9 + 2 + 8*10 + 10},
		{"unknown preset", CNNSpec{Preset: "resnet"}, 784, "preset", 0},
		{"preset and layers", CNNSpec{Preset: "lenet", Layers: []LayerSpec{{Kind: "relu"}}}, 3072, "not both", 0},
		{"nothing", CNNSpec{}, 784, "give a preset", 0},
		{"unknown layer", CNNSpec{Layers: []LayerSpec{{Kind: "lstm"}}}, 16, "layers[0]: unknown kind", 0},
		{"misplaced key", CNNSpec{Layers: []LayerSpec{{Kind: "relu", Kernel: 3}}}, 16, "relu takes no kernel", 0},
		{"negative", CNNSpec{Layers: []LayerSpec{{Kind: "conv2d", Out: 2, Kernel: 3, Padding: -1}}}, 16, "padding must be >= 0", 0},
		{"not square", CNNSpec{Preset: "fedem-cnn"}, 20, "cannot infer the input shape", 0},
		{"input mismatch", CNNSpec{Preset: "fedem-cnn", Input: []int{1, 28, 27}}, 784, "hold the data's 784 features", 0},
		{"input length", CNNSpec{Preset: "fedem-cnn", Input: []int{784}}, 784, "[channels, height, width]", 0},
		{"kernel too large", CNNSpec{Layers: []LayerSpec{{Kind: "conv2d", Out: 2, Kernel: 5}, {Kind: "dense", Out: 10}}}, 16, "", 0},
		{"wrong last size", CNNSpec{Layers: []LayerSpec{{Kind: "flatten"}, {Kind: "dense", Out: 3}}}, 16, "", 0},
		{"bad l2", CNNSpec{L2: -1, Preset: "fedem-cnn"}, 784, "l2", 0},
	} {
		err := tc.spec.Validate(tc.features, 10)
		switch {
		case tc.name == "kernel too large" || tc.name == "wrong last size":
			// Errors of package nn, whatever their wording.
			if err == nil {
				t.Errorf("%s: Validate accepted an invalid stack", tc.name)
			}
		case tc.want == "":
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if got := tc.spec.Dim(tc.features, 10); got != tc.dim {
				t.Errorf("%s: Dim = %d, want %d", tc.name, got, tc.dim)
			}
			if m := NewClassifier[float64](&tc.spec, tc.features, 10); int64(m.Dim()) != tc.dim {
				t.Errorf("%s: New gives %d parameters, Dim says %d", tc.name, m.Dim(), tc.dim)
			}
			if c := tc.spec.Cost(tc.features, 10, 128); c.ForwardFlops <= 0 || c.Workspace <= 0 {
				t.Errorf("%s: Cost %+v, want positive", tc.name, c)
			}
		case err == nil || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestCNNPresetDocListsEveryPreset keeps the preset key's documentation
// from going stale when nn gains a preset.
func TestCNNPresetDocListsEveryPreset(t *testing.T) {
	doc := ""
	_, params, _ := Architectures.Describe("cnn")
	for _, p := range params {
		if p.Key == "preset" {
			doc = p.Doc
		}
	}
	for _, name := range nn.Presets() {
		if !strings.Contains(doc, name) {
			t.Errorf("the doc of model.preset (%q) does not name the preset %q", doc, name)
		}
	}
}
