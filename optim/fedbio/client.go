package fedbio

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// client is one of nodes 1 … m.
type client struct {
	p      *plan
	h      *hyperPlan
	id     int
	loss   *models.SampleWeighted[float64]
	data   *datasets.Dataset
	noisy  []bool
	lambda []float64
	active []int // rows the local minibatches are drawn from
	batch  *optim.Batcher
	batchR *rng.Stream // the batcher's stream, kept when setActive rebuilds it
	hyperR *rng.Stream
	x, g   []float64
	v, hv  []float64
	hidx   []int
	dir    []float64
	train  bool // sampled for local training this round
	inCall bool // holds the state of the current hyper-gradient call
	out    optim.SendBuffers
	topk   *topkClient
	sketch *compressSketch
	nonIt  *nonIterClient
}

func newClient(p *plan, s *optim.Setup, loss *models.SampleWeighted[float64], i int) (*client, error) {
	data := s.Data[i].Train
	d := loss.Dim()
	c := &client{p: p, h: p.hyper, id: i, loss: loss, data: data, noisy: s.Data[i].Noisy,
		lambda: make([]float64, data.N), x: make([]float64, d), g: make([]float64, d),
		hyperR: rng.NewStream(s.Seed, i, rng.PurposeHyper), dir: make([]float64, data.N)}
	if c.noisy == nil {
		c.noisy = make([]bool, data.N)
	}
	for j := range c.lambda {
		c.lambda[j] = 1
		if p.mode == lambdaOracle && c.noisy[j] {
			c.lambda[j] = 0
		}
	}
	c.setActive()
	c.batchR = rng.NewStream(s.Seed, i, rng.PurposeBatch)
	c.batch = optim.NewBatcher(max(1, len(c.active)), p.train.Batch, c.batchR)
	if h := p.hyper; h != nil {
		c.v, c.hv = make([]float64, d), make([]float64, d)
		switch {
		case !h.iterative:
			c.nonIt = newNonIterClient(d, h)
		case h.compressor == "topk":
			t, err := newTopkClient(d, h.k)
			if err != nil {
				return nil, err
			}
			c.topk = t
		case h.compressor == "sketch":
			c.sketch = newCompressSketch(d, h)
		}
	}
	return c, nil
}

// setActive sets the rows local training draws from: those with λ > 0 for
// the oracle and Preprocess (training on the kept samples only), all rows
// for Comm-FedBiO (the λ-weighted loss of Eq. 7).
func (c *client) setActive() {
	c.active = c.active[:0]
	for j := range c.data.N {
		if c.p.mode == lambdaLearned || c.lambda[j] > 0 {
			c.active = append(c.active, j)
		}
	}
	if c.batch != nil {
		c.batch = optim.NewBatcher(max(1, len(c.active)), c.p.train.Batch, c.batchR)
	}
}

func (c *client) upload(out optim.Outbox, kind optim.Kind, vec []float64) {
	optim.Send(out, []int{0}, optim.Payload{Kind: kind, Vec: c.out.Fill(vec)})
}

func (c *client) Receive(r *optim.Round, in []optim.Message) error {
	if r.Phase == "preprocess" {
		if r.Index == 0 {
			for _, m := range in {
				if m.From == 0 && m.Kind == optim.KindModel && len(m.Vec) == len(c.x) {
					c.filter(m.Vec)
				}
			}
		}
		return nil
	}
	per := c.p.period()
	slot := r.Index % per
	if r.Up() {
		return nil
	}
	var msg *optim.Message
	for k := range in {
		if in[k].From == 0 {
			msg = &in[k]
		}
	}
	switch {
	case slot == 0:
		c.train = msg != nil && len(msg.Vec) == len(c.x)
		if c.train {
			copy(c.x, msg.Vec)
		}
	case slot == 2:
		c.inCall = false
		if msg == nil {
			return nil
		}
		d := len(c.x)
		if c.h.iterative && len(msg.Vec) == 2*d {
			copy(c.x, msg.Vec[:d])
			copy(c.v, msg.Vec[d:])
			c.inCall = true
		} else if !c.h.iterative && len(msg.Vec) == d {
			copy(c.x, msg.Vec)
			c.inCall = true
		}
		if c.inCall {
			c.drawHyperBatch()
			if c.topk != nil {
				c.topk.fb.Reset()
			}
		}
	case slot < per-2:
		if msg != nil && c.inCall && len(msg.Vec) == len(c.v) {
			copy(c.v, msg.Vec)
		}
	default: // the final v or ω̂: the λ-update
		if msg == nil || !c.inCall {
			c.inCall = false
			return nil
		}
		c.inCall = false
		if c.h.iterative {
			if len(msg.Vec) != len(c.v) {
				return nil
			}
			copy(c.v, msg.Vec)
		} else {
			if len(msg.Vec) != c.h.r1 {
				return nil
			}
			c.nonIt.s1.ApplyT(c.v, msg.Vec)
		}
		return c.updateLambda()
	}
	return nil
}

func (c *client) drawHyperBatch() {
	n := c.data.N
	if c.h.hvpBatch <= 0 || c.h.hvpBatch >= n {
		c.hidx = nil
		return
	}
	c.hidx = append(c.hidx[:0], c.hyperR.Perm(n)[:c.h.hvpBatch]...)
}

// updateLambda is line 13 of Alg. 1 on the client's own block:
// ĝ_j = −s⟨∇ℓ(y; s_j), v⟩ with s = 1/N (exact) or 1 (per-sample scale),
// λ ← clip(λ − η ĝ, 0, 1).
func (c *client) updateLambda() error {
	c.loss.SampleDirectional(c.dir, c.x, c.data, nil, c.v)
	scale := 1.0
	if !c.h.perSample {
		scale = 1 / c.p.totalN
	}
	for j, dj := range c.dir {
		if math.IsNaN(dj) || math.IsInf(dj, 0) {
			return fmt.Errorf("%w: hyper-gradient block of sample %d", optim.ErrNonFinite, j)
		}
		c.lambda[j] = min(1, max(0, c.lambda[j]+c.h.eta*scale*dj))
	}
	return nil
}

func (c *client) Send(r *optim.Round, out optim.Outbox) error {
	if r.Phase == "preprocess" {
		return nil
	}
	per := c.p.period()
	slot := r.Index % per
	if r.Down() || (c.h != nil && slot == per-1) {
		return nil
	}
	if slot == 1 {
		if !c.train {
			return nil
		}
		c.train = false
		if len(c.active) > 0 {
			for range c.p.train.LocalSteps {
				idx := c.batch.Next()
				var rows []int
				if idx == nil {
					rows = c.active
				} else {
					rows = make([]int, len(idx))
					for k, q := range idx {
						rows[k] = c.active[q]
					}
				}
				loss := c.loss.Grad(c.g, c.x, c.lambda, c.data, rows)
				if math.IsNaN(loss) || math.IsInf(loss, 0) {
					return fmt.Errorf("%w: the local training loss is %v (lower lr)", optim.ErrNonFinite, loss)
				}
				floats.AddScaled(c.x, -c.p.train.LR, c.g)
			}
		}
		c.upload(out, optim.KindModel, c.x)
		return nil
	}
	if !c.inCall {
		return nil
	}
	h := c.h
	if !h.iterative {
		c.upload(out, optim.KindUpdate, c.nonIt.sketchHessian(c.loss, c.x, c.lambda, c.data, c.hidx))
		return nil
	}
	c.loss.HVP(c.hv, c.x, c.lambda, c.data, c.hidx, c.v)
	switch h.compressor {
	case "none":
		c.upload(out, optim.KindUpdate, c.hv)
	case "topk":
		floats.Scale(h.alpha, c.hv)
		c.upload(out, optim.KindUpdate, c.topk.message(c.hv))
	case "sketch":
		c.upload(out, optim.KindUpdate, c.sketch.table(c.hv))
	}
	return nil
}

// filter (Preprocess) keeps the samples whose label the benchmark model
// gives probability >= threshold.
func (c *client) filter(bench []float64) {
	for j := range c.data.N {
		if c.loss.Probability(bench, c.data, j) >= c.p.threshold {
			c.lambda[j] = 1
		} else {
			c.lambda[j] = 0
		}
	}
	c.setActive()
}

// Result implements Resulter: the client's ClientResult.
func (c *client) Result() optim.Result {
	r := ClientResult{N: len(c.lambda), Weights: c.lambda}
	for j, l := range c.lambda {
		pred := l < 0.5
		switch {
		case pred && c.noisy[j]:
			r.TP++
		case pred:
			r.FP++
		case c.noisy[j]:
			r.FN++
		}
	}
	return r.Result()
}
