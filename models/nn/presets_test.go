package nn

import "testing"

func TestPresetsCounts(t *testing.T) {
	mnist := Shape{1, 28, 28}
	for _, c := range []struct {
		name    string
		in      Shape
		classes int
		params  int
	}{
		{"fedem-cnn", mnist, 62, 2278334},
		{"fedem-cnn", mnist, 10, 2278334 - 52*2048 - 52},
		{"fedbio-4conv", mnist, 10, 112074},
		{"node-weighting", mnist, 10, 363},
		{"node-weighting", Shape{3, 32, 32}, 10, 1488},
		{"lenet", Shape{3, 32, 32}, 10, 62006},
	} {
		specs, err := Preset(c.name, c.in, c.classes)
		if err != nil {
			t.Fatal(err)
		}
		info, err := Plan(c.in, specs, c.classes)
		if err != nil {
			t.Fatal(err)
		}
		if info.Params != c.params {
			t.Errorf("%s on %v with %d classes: %d parameters, want %d", c.name, c.in, c.classes, info.Params, c.params)
		}
	}
	info, _ := Plan(mnist, mustPreset(t, "fedem-cnn", mnist, 62), 62)
	// PyTorch's parameters() order: conv1 (32·25 + 32), conv2 (64·800 + 64),
	// dense (2048·1024 + 2048), dense (62·2048 + 62); ReLUs, pools and the
	// flatten have none.
	wantOff := []int{0, 832, 832, 832, 52096, 52096, 52096, 52096, 2151296, 2151296, 2278334}
	for i, o := range wantOff {
		if info.Offsets[i] != o {
			t.Fatalf("fedem-cnn parameter offsets %v, want %v", info.Offsets, wantOff)
		}
	}
	if s := info.Shapes[1]; s != (Shape{32, 24, 24}) {
		t.Errorf("fedem-cnn: the ReLU after the first convolution outputs %v, want 32×24×24", s)
	}
	if f := float64(info.FLOPs) / 1e6; f < 11.8 || f > 12.0 {
		t.Errorf("fedem-cnn: %.2f MFLOP per sample forward, want ≈ 11.9", f)
	}
	if _, err := Preset("nope", mnist, 10); err == nil {
		t.Error("unknown preset: no error")
	}
	if _, err := Preset("fedbio-4conv", Shape{1, 25, 25}, 10); err == nil {
		t.Error("fedbio-4conv on 25×25: no error")
	}
	for _, name := range Presets() {
		if PresetDoc(name) == "" {
			t.Errorf("preset %s has no description", name)
		}
	}
}

func mustPreset(t *testing.T, name string, in Shape, classes int) []Spec {
	t.Helper()
	s, err := Preset(name, in, classes)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPresetDerivatives(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Shape
	}{
		{"fedem-cnn", Shape{1, 16, 16}},
		{"fedbio-4conv", Shape{1, 26, 26}},
		{"node-weighting", Shape{1, 16, 16}},
		{"lenet", Shape{3, 16, 16}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkDerivatives(t, c.in, mustPreset(t, c.name, c.in, 5), 5, 3)
		})
	}
}
