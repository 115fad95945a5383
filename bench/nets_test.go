package bench

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"hgpsim/models/nn"
)

// readLE reads a little-endian float64 or float32 file value by value,
// independently of writeLE's encoding/binary path.
func readLE[F float32 | float64](t *testing.T, path string) []F {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := int(unsafe.Sizeof(F(0)))
	if len(b)%size != 0 {
		t.Fatalf("%s: %d bytes, not a multiple of %d", path, len(b), size)
	}
	v := make([]F, len(b)/size)
	for i := range v {
		if size == 8 {
			v[i] = F(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		} else {
			v[i] = F(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return v
}

// sameBits fails t unless got and want hold the same values bit for bit
// (float32 widens to float64 exactly, so comparing widened bits is exact).
func sameBits[F float32 | float64](t *testing.T, what string, got, want []F) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestDumpNetRoundTrip writes a small lenet problem, reads every file back
// and checks it against the problem and against a second, independently
// built problem's gradient and HVP; the layer list must rebuild the same
// nn.Specs from the kind names.
func TestDumpNetRoundTrip(t *testing.T) {
	c := NetCase{Name: "lenet-small", Preset: "lenet", In: nn.Shape{C: 3, H: 32, W: 32}, Classes: 7, Batch: 5}
	p, err := NewNetProblem(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := DumpNet(dir, p); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, c.Name)

	q, err := NewNetProblem(c) // same seed: the same data, a fresh net
	if err != nil {
		t.Fatal(err)
	}
	grad, hvp := make([]float64, q.Net.Dim()), make([]float64, q.Net.Dim())
	loss := q.Net.Grad(grad, q.X, q.A, q.Labels, NetL2)
	q.Net.HVP(hvp, q.X, q.A, q.Labels, NetL2, q.U)

	b, err := os.ReadFile(filepath.Join(folder, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec DumpSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Name != c.Name || spec.Preset != c.Preset || spec.Input != [3]int{3, 32, 32} || spec.Classes != 7 ||
		spec.Batch != 5 || spec.Params != q.Net.Dim() || spec.FLOPs != q.Net.FLOPs() || spec.L2 != NetL2 {
		t.Errorf("spec.json header %+v does not describe the problem", spec)
	}
	if spec.Loss != loss {
		t.Errorf("loss %v, want %v", spec.Loss, loss)
	}
	kinds := map[string]nn.Kind{}
	for k := nn.KindConv2D; k <= nn.KindGroupNorm; k++ {
		kinds[k.String()] = k
	}
	if len(spec.Layers) != len(p.Specs) {
		t.Fatalf("%d layers, want %d", len(spec.Layers), len(p.Specs))
	}
	for i, l := range spec.Layers {
		s := p.Specs[i]
		want := nn.Spec{Kind: kinds[l.Kind], Out: l.Out, KH: l.KH, KW: l.KW, Stride: l.Stride, Pad: l.Pad}
		if s.Stride == 0 { // the dump resolves the default
			switch s.Kind {
			case nn.KindConv2D:
				s.Stride = 1
			case nn.KindMaxPool2D, nn.KindAvgPool2D:
				s.Stride = s.KH
			}
		}
		if want != s {
			t.Errorf("layer %d: dumped as %+v, rebuilt %+v, want %+v", i, l, want, s)
		}
	}

	sameBits(t, DumpX, readLE[float64](t, filepath.Join(folder, DumpX)), q.X)
	sameBits(t, DumpA, readLE[float64](t, filepath.Join(folder, DumpA)), q.A)
	sameBits(t, DumpU, readLE[float64](t, filepath.Join(folder, DumpU)), q.U)
	sameBits(t, DumpGrad, readLE[float64](t, filepath.Join(folder, DumpGrad)), grad)
	sameBits(t, DumpHVP, readLE[float64](t, filepath.Join(folder, DumpHVP)), hvp)

	// The float32 results: q's float32 twin, built independently at the
	// rounded point, must give the dumped bits.
	if _, err := q.Ops32(); err != nil {
		t.Fatal(err)
	}
	n32 := q.f32
	grad32, hvp32 := make([]float32, n32.net.Dim()), make([]float32, n32.net.Dim())
	loss32 := n32.net.Grad(grad32, n32.x, n32.a, q.Labels, NetL2)
	n32.net.HVP(hvp32, n32.x, n32.a, q.Labels, NetL2, n32.u)
	if spec.Loss32 != loss32 || loss32 == loss {
		t.Errorf("float32 loss %v, want %v (and not the float64 loss %v)", spec.Loss32, loss32, loss)
	}
	sameBits(t, DumpGrad32, readLE[float32](t, filepath.Join(folder, DumpGrad32)), grad32)
	sameBits(t, DumpHVP32, readLE[float32](t, filepath.Join(folder, DumpHVP32)), hvp32)
	yb, err := os.ReadFile(filepath.Join(folder, DumpY))
	if err != nil {
		t.Fatal(err)
	}
	if len(yb) != 8*c.Batch {
		t.Fatalf("%s: %d bytes, want %d", DumpY, len(yb), 8*c.Batch)
	}
	for i, y := range q.Labels {
		if got := int64(binary.LittleEndian.Uint64(yb[8*i:])); got != int64(y) {
			t.Errorf("label %d = %d, want %d", i, got, y)
		}
	}
}

// TestNetOps checks the cases, the ops' names and work, and one timing.
func TestNetOps(t *testing.T) {
	cases := NetCases()
	if len(cases) != 6 || cases[0].Name != "fedem-cnn" || cases[1].Classes != 62 || cases[4].Layers == nil {
		t.Fatalf("unexpected cases %+v", cases)
	}
	c := cases[len(cases)-1]
	c.Batch = 3
	p, err := NewNetProblem(c)
	if err != nil {
		t.Fatal(err)
	}
	ops := p.Ops()
	fwd := float64(p.Net.FLOPs()) * 3
	if len(ops) != 2 || ops[0].Name != "lenet-grad" || ops[1].Name != "lenet-hvp" ||
		ops[0].FLOPs != 3*fwd || ops[1].FLOPs != 8*fwd {
		t.Fatalf("ops %q %v, %q %v; want lenet-grad %v, lenet-hvp %v", ops[0].Name, ops[0].FLOPs, ops[1].Name, ops[1].FLOPs, 3*fwd, 8*fwd)
	}
	times := TimeOps([]Op{ops[1].Op}, 1, time.Millisecond)
	if len(times) != 1 || times[0].Median <= 0 {
		t.Errorf("implausible timing %+v", times)
	}
	if _, err := NewNetProblem(NetCase{Name: "x", Preset: "no-such-net", In: c.In, Classes: 10, Batch: 1}); err == nil {
		t.Error("an unknown preset built")
	}
}

// TestNetOps32 checks the float32 ops: their names, work and shapes, that
// they compute the float64 ops' results to float32 precision, and that
// MeasureNets' table and JSON carry their times.
func TestNetOps32(t *testing.T) {
	c := NetCases()[len(NetCases())-1]
	c.Batch = 3
	p, err := NewNetProblem(c)
	if err != nil {
		t.Fatal(err)
	}
	ops, ops32 := p.Ops(), must32(t, p)
	if len(ops32) != 2 {
		t.Fatalf("%d float32 ops, want 2", len(ops32))
	}
	for k, op := range ops32 {
		if op.Name != ops[k].Name || op.FLOPs != ops[k].FLOPs || !strings.HasSuffix(op.Shape, ", f32") {
			t.Errorf("float32 op %q (%s, %v FLOPs), want %q's name and work", op.Name, op.Shape, op.FLOPs, ops[k].Name)
		}
		ops[k].Run()
		op.Run()
		var d, s float64
		for i, v := range p.dst {
			w := float64(p.f32.d[i])
			d += (w - v) * (w - v)
			s += v * v
		}
		// lenet's sums have at most 2048 terms: float32 is off by about
		// L·√K·2⁻²⁴ ≈ 3e-5 relative at most (see models/nn).
		if e := math.Sqrt(d / s); !(e < 1e-4) {
			t.Errorf("%s: float32 off by %.3g relative to float64", op.Name, e)
		}
	}
	if q := p.f32; must32(t, p) != nil && p.f32 != q {
		t.Error("a second Ops32 built a second float32 net")
	}
	var b strings.Builder
	WriteNets(&b, []NetTime{{Op: "lenet-grad", Shape: "s", Ms: 2, GFLOPs: 3, Ms32: 4, GFLOPs32: 1.5}})
	if !strings.Contains(b.String(), "| f32 ms | f32 GFLOP/s |") || !strings.Contains(b.String(), "| 2.000 | 3.0 | 4.000 | 1.5 |") {
		t.Errorf("table with float32 times:\n%s", b.String())
	}
	js, err := json.Marshal(NetTime{Op: "x", Ms: 2})
	if err != nil || strings.Contains(string(js), "f32") {
		t.Errorf("JSON without float32 times: %s (%v)", js, err)
	}
}

func must32(t *testing.T, p *NetProblem) []NetOp {
	t.Helper()
	ops, err := p.Ops32()
	if err != nil {
		t.Fatal(err)
	}
	return ops
}
