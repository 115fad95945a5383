package bench

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"hgpsim/internal/rng"
	"hgpsim/models/nn"
)

// The convolutional presets of models/nn at the shapes of the PyTorch
// yardstick tools/yardstick/torch_nets.py: a minibatch of NetBatch
// samples, mean cross-entropy plus (NetL2/2)‖x‖².
const (
	NetBatch = 128
	NetL2    = 1e-4
)

// Work per call of the net ops, in forward passes (nn.Info.FLOPs per
// sample times the batch). A gradient is a forward pass and a backward pass
// of two products per layer (input and weight gradients): 3, the count
// PyTorch users quote. A Hessian-vector product as nn computes it is a
// forward pass (1), its tangent (2: W·R{x} and U·x), the backpropagation of
// G (1: the input gradients; the weight gradients of G are not needed) and
// the tangent of the backward pass (4: R{gx} = Wᵀ·R{gy} + Uᵀ·gy and
// R{gW} = R{gy}·xᵀ + gy·R{x}ᵀ): 8. Both counts ignore that the first layer
// needs no input gradient and no R{x} terms, and the elementwise layers,
// pools and norms, as Info.FLOPs does; PyTorch's double backward does at
// least as many products, so the same count serves both sides.
const (
	GradPasses = 3
	HVPPasses  = 8
)

// NetCase is one preset network at one input shape and class count.
type NetCase struct {
	// Name names the op ("NAME-grad", "NAME-hvp") and the dump folder: the
	// preset's name, with the class count appended when it is not 10.
	Name   string
	Preset string
	// Layers is the stack of a net that is not a preset (Preset empty).
	Layers  []nn.Spec
	In      nn.Shape
	Classes int
	Batch   int
}

// NetCases returns the yardstick's nets: every preset on 1×28×28 with 10
// classes (lenet on 3×32×32, the CIFAR-10 shape it was made for),
// fedem-cnn also with the 62 classes of FEMNIST, its paper's data set, and
// Norm1632.
func NetCases() []NetCase {
	mnist, cifar := nn.Shape{C: 1, H: 28, W: 28}, nn.Shape{C: 3, H: 32, W: 32}
	return []NetCase{
		{"fedem-cnn", "fedem-cnn", nil, mnist, 10, NetBatch},
		{"fedem-cnn-62", "fedem-cnn", nil, mnist, 62, NetBatch},
		{"fedbio-4conv", "fedbio-4conv", nil, mnist, 10, NetBatch},
		{"node-weighting", "node-weighting", nil, mnist, 10, NetBatch},
		{"norm-16-32", "", Norm1632(10), mnist, 10, NetBatch},
		{"lenet", "lenet", nil, cifar, 10, NetBatch},
	}
}

// NetProblem is a NetCase built: the net, parameters from Init, a batch of
// inputs (uniform on [0, 1), flattened NCHW) and labels, and a direction u
// (standard normal), all drawn from a fixed seed.
type NetProblem struct {
	NetCase
	Specs  []nn.Spec
	Net    *nn.Net[float64]
	X, A   []float64
	Labels []int
	U      []float64
	dst    []float64

	// f32: the same net and values in float32 (X, A and U rounded), built
	// by Ops32.
	f32 *netProblem32
}

// netProblem32 is a NetProblem's float32 twin.
type netProblem32 struct {
	net        *nn.Net[float32]
	x, a, u, d []float32
}

// NewNetProblem builds c.
func NewNetProblem(c NetCase) (*NetProblem, error) {
	if c.Batch < 1 {
		return nil, fmt.Errorf("bench: net %s: batch %d, must be positive", c.Name, c.Batch)
	}
	specs, err := c.Layers, error(nil)
	if c.Preset != "" {
		specs, err = nn.Preset(c.Preset, c.In, c.Classes)
	}
	if err != nil {
		return nil, err
	}
	net, err := nn.New[float64](c.In, specs, c.Classes)
	if err != nil {
		return nil, err
	}
	r := rng.New(1, rng.Global, rng.PurposeInit)
	p := &NetProblem{NetCase: c, Specs: specs, Net: net, X: make([]float64, net.Dim()),
		A: make([]float64, c.Batch*c.In.Size()), Labels: make([]int, c.Batch), dst: make([]float64, net.Dim())}
	net.Init(p.X, r)
	for i := range p.A {
		p.A[i] = r.Float64()
	}
	for i := range p.Labels {
		p.Labels[i] = r.IntN(c.Classes)
	}
	p.U = randomVector(r, net.Dim())
	return p, nil
}

// Shape describes the problem for the tables.
func (p *NetProblem) Shape() string {
	return fmt.Sprintf("%v, %d classes, d = %d, batch %d, f64", p.In, p.Classes, p.Net.Dim(), p.Batch)
}

// NetOp is a timed op with its floating-point work per call.
type NetOp struct {
	Op
	FLOPs float64
}

// Ops returns the gradient and the Hessian-vector product of the problem's
// loss at X (along U for the latter), each a whole nn.Net.Grad or
// nn.Net.HVP call: forward pass included, as PyTorch's autograd does it.
func (p *NetProblem) Ops() []NetOp {
	fwd := float64(p.Net.FLOPs()) * float64(p.Batch)
	return []NetOp{
		{Op{p.Name + "-grad", p.Shape(), func() { p.Net.Grad(p.dst, p.X, p.A, p.Labels, NetL2) }}, GradPasses * fwd},
		{Op{p.Name + "-hvp", p.Shape(), func() { p.Net.HVP(p.dst, p.X, p.A, p.Labels, NetL2, p.U) }}, HVPPasses * fwd},
	}
}

// Ops32 returns Ops in float32: the same ops on a Net[float32] of the same
// layers at X, A and U rounded to float32, named as Ops names them.
func (p *NetProblem) Ops32() ([]NetOp, error) {
	if p.f32 == nil {
		net, err := nn.New[float32](p.In, p.Specs, p.Classes)
		if err != nil {
			return nil, err
		}
		p.f32 = &netProblem32{net: net, x: round32(p.X), a: round32(p.A), u: round32(p.U), d: make([]float32, net.Dim())}
	}
	q := p.f32
	fwd := float64(q.net.FLOPs()) * float64(p.Batch)
	shape := fmt.Sprintf("%v, %d classes, d = %d, batch %d, f32", p.In, p.Classes, q.net.Dim(), p.Batch)
	return []NetOp{
		{Op{p.Name + "-grad", shape, func() { q.net.Grad(q.d, q.x, q.a, p.Labels, NetL2) }}, GradPasses * fwd},
		{Op{p.Name + "-hvp", shape, func() { q.net.HVP(q.d, q.x, q.a, p.Labels, NetL2, q.u) }}, HVPPasses * fwd},
	}, nil
}

func round32(v []float64) []float32 {
	w := make([]float32, len(v))
	for i, t := range v {
		w[i] = float32(t)
	}
	return w
}

// NetTime is the median time of one net op.
type NetTime struct {
	Op     string        `json:"op"`
	Shape  string        `json:"shape"`
	Median time.Duration `json:"-"`
	Ms     float64       `json:"ms"`
	// GFLOPs is the op's work (GradPasses or HVPPasses forward passes) per
	// second of the median time, in 10⁹.
	GFLOPs float64 `json:"gflops"`
	// Ms32 and GFLOPs32 are the same for the op in float32 (Ops32), when
	// NetOptions.Float32 asked for them.
	Ms32     float64 `json:"ms_f32,omitempty"`
	GFLOPs32 float64 `json:"gflops_f32,omitempty"`
}

// NetOptions are the knobs of MeasureNets.
type NetOptions struct {
	Reps   int           // timings per op, each of about Budget; the median is reported
	Budget time.Duration // minimum time of one timing (at least one call)
	// Dump, if not empty, is a folder into which each net's inputs and
	// results are written (DumpNet) for tools/yardstick/torch_nets.py.
	Dump string
	// Progress gets one line per net; nil discards them.
	Progress io.Writer
	// Float32 also times each op in float32 (NetTime.Ms32), after the
	// float64 timings of the same net.
	Float32 bool
}

// MeasureNets builds each of NetCases in turn (one at a time: fedem-cnn
// holds tens of MiB), dumps it if asked, and times its ops on the calling
// goroutine with TimeOps.
func MeasureNets(o NetOptions) ([]NetTime, error) {
	if o.Reps < 1 || o.Budget < 0 {
		return nil, fmt.Errorf("bench: %d repetitions of %v: need at least 1 and a non-negative budget", o.Reps, o.Budget)
	}
	var out []NetTime
	for _, c := range NetCases() {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "bench: net %s ...\n", c.Name)
		}
		p, err := NewNetProblem(c)
		if err != nil {
			return nil, err
		}
		if o.Dump != "" {
			if err := DumpNet(o.Dump, p); err != nil {
				return nil, err
			}
		}
		ops := p.Ops()
		plain := make([]Op, len(ops))
		for k, op := range ops {
			plain[k] = op.Op
		}
		first := len(out)
		for k, t := range TimeOps(plain, o.Reps, o.Budget) {
			out = append(out, NetTime{Op: t.Op, Shape: t.Shape, Median: t.Median, Ms: t.Ms,
				GFLOPs: ops[k].FLOPs / t.Median.Seconds() / 1e9})
		}
		if !o.Float32 {
			continue
		}
		ops32, err := p.Ops32()
		if err != nil {
			return nil, err
		}
		for k, op := range ops32 {
			plain[k] = op.Op
		}
		for k, t := range TimeOps(plain, o.Reps, o.Budget) {
			out[first+k].Ms32, out[first+k].GFLOPs32 = t.Ms, ops32[k].FLOPs/t.Median.Seconds()/1e9
		}
	}
	return out, nil
}

// WriteNets writes the net op times as a Markdown table.
func WriteNets(w io.Writer, times []NetTime) {
	fmt.Fprintf(w, "hgpsim bench --phase nets: median of the per-call time on one goroutine; "+
		"GFLOP/s counts %d forward passes per gradient and %d per HVP; %s\n\n", GradPasses, HVPPasses, Machine())
	f32 := len(times) > 0 && times[0].Ms32 > 0
	if !f32 {
		fmt.Fprintln(w, "| op | shape | ms | GFLOP/s |")
		fmt.Fprintln(w, "|---|---|---:|---:|")
	} else {
		fmt.Fprintln(w, "| op | shape | ms | GFLOP/s | f32 ms | f32 GFLOP/s |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	}
	for _, t := range times {
		fmt.Fprintf(w, "| %s | %s | %.3f | %.1f |", t.Op, t.Shape, t.Ms, t.GFLOPs)
		if f32 {
			fmt.Fprintf(w, " %.3f | %.1f |", t.Ms32, t.GFLOPs32)
		}
		fmt.Fprintln(w)
	}
}

// DumpLayer is one layer in a dump's spec.json: nn's kind name
// (nn.Kind.String) and its sizes, with the stride resolved (1 for a
// convolution, the window for a pool when the Spec leaves it 0).
type DumpLayer struct {
	Kind   string `json:"kind"`
	Out    int    `json:"out,omitempty"` // outputs, output channels, or groups of a group norm
	KH     int    `json:"kh,omitempty"`
	KW     int    `json:"kw,omitempty"`
	Stride int    `json:"stride,omitempty"`
	Pad    int    `json:"pad,omitempty"`
}

// DumpSpec is a dump's spec.json.
type DumpSpec struct {
	Name    string      `json:"name"`
	Preset  string      `json:"preset"`
	Input   [3]int      `json:"input"` // C, H, W
	Classes int         `json:"classes"`
	Batch   int         `json:"batch"`
	Params  int         `json:"params"`
	FLOPs   int64       `json:"flops_forward"` // per sample, nn.Info.FLOPs
	L2      float64     `json:"l2"`
	Loss    float64     `json:"loss"`
	Loss32  float64     `json:"loss_f32"` // the float32 net's loss at X, A rounded to float32
	Layers  []DumpLayer `json:"layers"`
}

// The files of a dump folder besides spec.json: little-endian float64
// (.f64) and int64 (.i64) arrays without header.
const (
	DumpX    = "x.f64"    // parameters, in nn's order (PyTorch's parameters())
	DumpA    = "a.f64"    // inputs, batch × C × H × W
	DumpY    = "y.i64"    // labels
	DumpU    = "u.f64"    // the HVP's direction
	DumpGrad = "grad.f64" // hgpsim's gradient at x
	DumpHVP  = "hvp.f64"  // hgpsim's Hessian-vector product at x along u

	// The float32 net's at x, a and u rounded to float32 (little-endian
	// float32): torch_nets.py checks them against PyTorch's float64
	// values at that rounded point.
	DumpGrad32 = "grad.f32"
	DumpHVP32  = "hvp.f32"
)

// DumpNet writes p into dir/p.Name: spec.json (DumpSpec, with the loss at
// X), X, A, the labels, U, and the gradient and Hessian-vector product
// that p.Net computes there — what torch_nets.py needs to rebuild the net
// and check PyTorch against it.
func DumpNet(dir string, p *NetProblem) error {
	folder := filepath.Join(dir, p.Name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return fmt.Errorf("bench: dump: %w", err)
	}
	grad, hvp := make([]float64, p.Net.Dim()), make([]float64, p.Net.Dim())
	loss := p.Net.Grad(grad, p.X, p.A, p.Labels, NetL2)
	p.Net.HVP(hvp, p.X, p.A, p.Labels, NetL2, p.U)
	if _, err := p.Ops32(); err != nil {
		return fmt.Errorf("bench: dump: %w", err)
	}
	q := p.f32
	grad32, hvp32 := make([]float32, q.net.Dim()), make([]float32, q.net.Dim())
	loss32 := q.net.Grad(grad32, q.x, q.a, p.Labels, NetL2)
	q.net.HVP(hvp32, q.x, q.a, p.Labels, NetL2, q.u)
	spec := DumpSpec{Name: p.Name, Preset: p.Preset, Input: [3]int{p.In.C, p.In.H, p.In.W}, Classes: p.Classes,
		Batch: p.Batch, Params: p.Net.Dim(), FLOPs: p.Net.FLOPs(), L2: NetL2, Loss: loss, Loss32: loss32}
	for _, s := range p.Specs {
		l := DumpLayer{Kind: s.Kind.String(), Out: s.Out, KH: s.KH, KW: s.KW, Stride: s.Stride, Pad: s.Pad}
		switch s.Kind {
		case nn.KindConv2D:
			if l.Stride == 0 {
				l.Stride = 1
			}
		case nn.KindMaxPool2D, nn.KindAvgPool2D:
			if l.Stride == 0 {
				l.Stride = s.KH
			}
		}
		spec.Layers = append(spec.Layers, l)
	}
	js, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: dump: %w", err)
	}
	if err := os.WriteFile(filepath.Join(folder, "spec.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: dump: %w", err)
	}
	labels := make([]int64, len(p.Labels))
	for i, y := range p.Labels {
		labels[i] = int64(y)
	}
	for _, f := range []struct {
		name string
		data any
	}{{DumpX, p.X}, {DumpA, p.A}, {DumpY, labels}, {DumpU, p.U}, {DumpGrad, grad}, {DumpHVP, hvp}, {DumpGrad32, grad32}, {DumpHVP32, hvp32}} {
		if err := writeLE(filepath.Join(folder, f.name), f.data); err != nil {
			return fmt.Errorf("bench: dump: %w", err)
		}
	}
	return nil
}

// writeLE writes a slice of fixed-size numbers to path, little-endian.
func writeLE(path string, data any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = binary.Write(w, binary.LittleEndian, data)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Norm1632 is a mid-size net with group norms: two 5×5 convolutions of 16
// and 32 channels, each followed by a one-group norm, ReLU and a 2×2 max
// pool, then a dense layer (18,474 parameters on 1×28×28 with 10 classes).
// The node-weighting paper's own net is tiny (363 parameters); this one
// measures the normalization at a size where it costs something.
func Norm1632(classes int) []nn.Spec {
	return []nn.Spec{
		nn.Conv2D(16, 5, 1, 0), nn.GroupNorm(1), nn.ReLU(), nn.MaxPool2D(2, 2),
		nn.Conv2D(32, 5, 1, 0), nn.GroupNorm(1), nn.ReLU(), nn.MaxPool2D(2, 2),
		nn.Flatten(), nn.Dense(classes),
	}
}
