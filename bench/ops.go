package bench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/pdbo"
)

// The shapes of the per-operation yardstick; tools/yardstick/torch_ops.py
// builds the same problems in PyTorch so that the two tables compare op by
// op.
const (
	OpFeatures = 784 // Fashion-MNIST pixels
	OpClasses  = 10
	OpBatch    = 128 // minibatch of the gradient and HVP ops
	OpHidden   = 64  // tanh MLP hidden units
	// The VR-HGP round is one client's round at the paper's n = 100
	// setting: PDBO-MTL&DA with three softmax bases, 42 full-batch rows,
	// OpDegree received messages of (u, w).
	OpBases  = 3
	OpRows   = 42
	OpDegree = 10
	OpN      = 100
)

// Op is one timed operation of the yardstick.
type Op struct {
	Name, Shape string
	Run         func()
}

// Ops returns the operations of the yardstick, built from a fixed seed:
// gradient and Hessian-vector product of softmax regression and of the tanh
// MLP on a minibatch, and one client's whole VR-HGP round (mixing the
// received u and w, the fused products of both, the updates).
func Ops() ([]Op, error) {
	r := rng.New(1, rng.Global, rng.PurposeInit)
	data := randomDataset(r, 4*OpBatch, OpFeatures, OpClasses)
	idx := make([]int, OpBatch)
	for i := range idx {
		idx[i] = r.IntN(data.N)
	}
	var ops []Op
	for _, c := range []struct {
		name string
		m    models.Model[float64]
	}{
		{"softmax", models.NewSoftmax[float64](OpFeatures, OpClasses, 1e-3)},
		{"mlp", models.NewMLP[float64](OpFeatures, OpHidden, OpClasses, 1e-3)},
	} {
		so, ok := c.m.(models.SecondOrder[float64])
		if !ok {
			return nil, fmt.Errorf("bench: %s has no Hessian-vector product", c.name)
		}
		x := make([]float64, c.m.Dim())
		c.m.Init(x, r)
		u := randomVector(r, len(x))
		g := make([]float64, len(x))
		shape := fmt.Sprintf("d = %d, batch %d, f64", c.m.Dim(), OpBatch)
		ops = append(ops,
			Op{c.name + "-grad", shape, func() { c.m.Grad(g, x, data, idx) }},
			Op{c.name + "-hvp", shape, func() { so.HVP(g, x, data, idx, u) }})
	}
	round, err := vrhgpRound(r)
	if err != nil {
		return nil, err
	}
	return append(ops, round), nil
}

// vrhgpRound builds one client's VR-HGP Receive at the paper's setting.
func vrhgpRound(r *rand.Rand) (Op, error) {
	bases := make([]models.Classifier[float64], OpBases)
	for k := range bases {
		bases[k] = models.NewSoftmax[float64](OpFeatures, OpClasses, 1e-3)
	}
	m := models.MTLDA(bases, 0.01, 5e-4)
	dx := m.DimX()
	data := randomDataset(r, OpRows, OpFeatures, OpClasses)
	z := make([]float64, dx)
	m.Init(z, r)
	pBar, deltaBar := make([]float64, OpN), make([]float64, OpN)
	for j := range pBar {
		pBar[j], deltaBar[j] = 1/float64(OpDegree+1), 0.5
	}
	lin := pdbo.Linearization[float64]{ID: 0, N: OpN, Model: m, Inner: data, Outer: data,
		Lambda: randomVector(r, m.DimLambda()), Z: z, Omega: 1, PBar: pBar, DeltaBar: deltaBar,
		Variant: pdbo.AfterComm, LR: 0.05, Seed: 1}
	est := pdbo.NewVRHGP(lin, 0.9, 0.1, pdbo.Simultaneous)
	in := make([]optim.Message, OpDegree+1)
	for k := range in {
		in[k] = optim.Message{From: k, Payload: optim.Payload{Kind: optim.KindDual, Vec: randomVector(r, 2*dx)}}
	}
	// Small vectors keep u and w bounded over many timed rounds.
	for k := range in {
		for i := range in[k].Vec {
			in[k].Vec[i] *= 1e-3
		}
	}
	rd := &optim.Round{Phase: "hyper", Self: 0}
	shape := fmt.Sprintf("PDBO-MTL&DA, %d softmax bases, d_x = %d, %d full-batch rows, %d messages of 2·d_x, f64",
		OpBases, dx, OpRows, OpDegree+1)
	return Op{"vrhgp-round", shape, func() {
		if err := est.Receive(rd, in); err != nil {
			panic(err) // bounded inputs: a non-finite state is a bug of the benchmark
		}
		rd.Index++
	}}, nil
}

func randomDataset(r *rand.Rand, n, features, classes int) *datasets.Dataset {
	d := &datasets.Dataset{N: n, D: features, C: classes, X: make([]float64, n*features), Y: make([]int, n)}
	for i := range d.X {
		d.X[i] = r.Float64()
	}
	for i := range d.Y {
		d.Y[i] = r.IntN(classes)
	}
	return d
}

func randomVector(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

// OpTime is the median time of one op.
type OpTime struct {
	Op     string        `json:"op"`
	Shape  string        `json:"shape"`
	Median time.Duration `json:"-"`
	Ms     float64       `json:"ms"`
}

// TimeOps runs each op for about budget after a warm-up, reps times, and
// returns the median time per call.
func TimeOps(ops []Op, reps int, budget time.Duration) []OpTime {
	out := make([]OpTime, 0, len(ops))
	for _, op := range ops {
		op.Run() // warm-up: caches, lazily sized buffers
		var times []time.Duration
		for range reps {
			calls := 0
			start := time.Now()
			for time.Since(start) < budget || calls == 0 {
				op.Run()
				calls++
			}
			times = append(times, time.Since(start)/time.Duration(calls))
		}
		slices.Sort(times)
		med := times[len(times)/2]
		out = append(out, OpTime{Op: op.Name, Shape: op.Shape, Median: med, Ms: float64(med.Microseconds()) / 1e3})
	}
	return out
}

// WriteOps writes the op times as a Markdown table.
func WriteOps(w io.Writer, times []OpTime) {
	fmt.Fprintf(w, "hgpsim bench --phase ops: median of the per-call time; %s\n\n", Machine())
	fmt.Fprintln(w, "| op | shape | ms |")
	fmt.Fprintln(w, "|---|---|---:|")
	for _, t := range times {
		fmt.Fprintf(w, "| %s | %s | %.3f |\n", t.Op, t.Shape, t.Ms)
	}
}
