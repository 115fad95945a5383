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

// server is node 0.
type server struct {
	p            *plan
	h            *hyperPlan
	loss         *models.SampleWeighted[float64]
	val, test    *datasets.Dataset
	m, sample    int
	sizes        []float64
	r            *rng.Stream
	x, acc       []float64
	gradF        []float64
	train, hyper []int
	out          optim.SendBuffers
	// Iterative state.
	v, agg  []float64
	sketch  *compressSketch
	omega   []float64
	nonIter *nonIterServer
	// Measured uploads (delivered to the server), for the metrics.
	upBytes, upMsgs, hyperBytes, hyperMsgs int64
	hyperFloats                            int
}

func newServer(p *plan, s *optim.Setup, loss *models.SampleWeighted[float64], m, sample int, sizes []float64) *server {
	d := loss.Dim()
	srv := &server{p: p, h: p.hyper, loss: loss, val: s.Data[0].Val, test: s.Test, m: m, sample: sample,
		sizes: sizes, r: rng.NewStream(s.Seed, 0, rng.PurposeSample), x: append([]float64(nil), s.X0...),
		acc: make([]float64, d), gradF: make([]float64, d)}
	if h := p.hyper; h != nil {
		srv.v, srv.agg = make([]float64, d), make([]float64, d)
		if h.compressor == "sketch" {
			srv.sketch = newCompressSketch(d, h)
		}
		if !h.iterative {
			srv.nonIter = newNonIterServer(d, h)
		}
	}
	return srv
}

func (s *server) send(out optim.Outbox, to []int, kind optim.Kind, parts ...[]float64) {
	optim.Send(out, to, optim.Payload{Kind: kind, Vec: s.out.Fill(parts...)})
}

func (s *server) Send(r *optim.Round, out optim.Outbox) error {
	if r.Phase == "preprocess" {
		if r.Index == 0 {
			return s.sendBenchmark(out)
		}
		return nil
	}
	per := s.p.period()
	slot := r.Index % per
	if r.Up() {
		return nil
	}
	switch {
	case slot == 0:
		s.train = optim.SampleClients(s.r.Rand, s.m, s.sample, s.train)
		s.send(out, s.train, optim.KindModel, s.x)
	case slot == 2:
		if s.h.iterative {
			s.send(out, s.hyper, optim.KindModel, s.x, s.v)
		} else {
			s.send(out, s.hyper, optim.KindModel, s.x)
		}
	case slot < per-2:
		s.send(out, s.hyper, optim.KindUpdate, s.v)
	default: // slot per−2: the last word of the call
		if s.h.iterative {
			s.send(out, s.hyper, optim.KindUpdate, s.v)
		} else {
			s.send(out, s.hyper, optim.KindUpdate, s.omega)
		}
	}
	return nil
}

func (s *server) Receive(r *optim.Round, in []optim.Message) error {
	if r.Phase == "preprocess" {
		return nil
	}
	per := s.p.period()
	slot := r.Index % per
	if r.Down() || (s.h != nil && slot == per-1) {
		return nil
	}
	var got []optim.Message
	for _, m := range in {
		if m.From != 0 {
			got = append(got, m)
			s.upBytes += messageBytes64(len(m.Vec))
			s.upMsgs++
			if slot > 1 {
				s.hyperBytes += messageBytes64(len(m.Vec))
				s.hyperMsgs++
				s.hyperFloats = len(m.Vec)
			}
		}
	}
	if slot == 1 {
		s.average(got)
		if !optim.AllFinite(s.x) {
			return optim.ErrNonFinite
		}
		if s.h != nil {
			s.startHyper()
		}
		return nil
	}
	if err := s.hyperStep(got); err != nil {
		return err
	}
	return nil
}

// average is line 10 of Alg. 1 over the uploads that arrived.
func (s *server) average(got []optim.Message) {
	var total float64
	clear(s.acc)
	for _, m := range got {
		if m.Kind != optim.KindModel || len(m.Vec) != len(s.x) {
			continue
		}
		w := s.sizes[m.From]
		total += w
		for k, v := range m.Vec {
			s.acc[k] += w * (v - s.x[k])
		}
	}
	if total > 0 {
		floats.AddScaled(s.x, 1/total, s.acc)
	}
}

// startHyper evaluates ∇_y F on the validation set, samples the clients of
// the hyper-gradient call and sets v¹ = α∇F (the first gradient step from
// v⁰ = 0 needs no Hessian: H·0 = 0).
func (s *server) startHyper() {
	s.loss.Grad(s.gradF, s.x, nil, s.val, nil)
	floats.AddScaled(s.gradF, -s.loss.L2(), s.x) // F is the validation loss, without the regularizer
	s.hyper = optim.SampleClients(s.r.Rand, s.m, s.sample, s.hyper)
	if s.h.iterative {
		for k := range s.v {
			s.v[k] = s.h.alpha * s.gradF[k]
		}
		if s.sketch != nil {
			s.sketch.reset()
		}
	}
}

// hyperStep folds one exchange's uploads into v (Alg. 2 lines 7–10) or
// solves the sketched system (Alg. 3 line 6).
func (s *server) hyperStep(got []optim.Message) error {
	h := s.h
	var total float64
	for _, m := range got {
		total += s.sizes[m.From]
	}
	if total == 0 {
		return nil // nothing arrived: v stays
	}
	if !h.iterative {
		om, err := s.nonIter.solve(got, s.sizes, total, s.gradF)
		if err != nil {
			return err
		}
		s.omega = om
		return nil
	}
	clear(s.agg)
	switch h.compressor {
	case "none":
		for _, m := range got {
			if len(m.Vec) == len(s.agg) {
				floats.AddScaled(s.agg, h.alpha*s.sizes[m.From]/total, m.Vec)
			}
		}
	case "topk":
		for _, m := range got {
			k := len(m.Vec) / 2
			w := s.sizes[m.From] / total
			for n := range k {
				i := int(m.Vec[n])
				if i >= 0 && i < len(s.agg) {
					s.agg[i] += w * m.Vec[k+n]
				}
			}
		}
	case "sketch":
		s.sketch.unsketch(s.agg, got, s.sizes, total)
	}
	// v ← v − (Δ − α∇F)
	for k := range s.v {
		s.v[k] -= s.agg[k] - h.alpha*s.gradF[k]
	}
	if !optim.AllFinite(s.v) {
		return fmt.Errorf("%w: the hyper-gradient iterate v (lower alpha)", optim.ErrNonFinite)
	}
	return nil
}

// sendBenchmark (Preprocess) trains the benchmark model on the validation
// set and sends it to every client.
func (s *server) sendBenchmark(out optim.Outbox) error {
	g := make([]float64, len(s.x))
	bench := append([]float64(nil), s.x...)
	for range s.p.benchSteps {
		loss := s.loss.Grad(g, bench, nil, s.val, nil)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("%w: the benchmark model's loss (lower bench_lr)", optim.ErrNonFinite)
		}
		floats.AddScaled(bench, -s.p.benchLR, g)
	}
	all := make([]int, s.m)
	for i := range all {
		all[i] = i + 1
	}
	s.send(out, all, optim.KindModel, bench)
	return nil
}

// Observe implements Observer: the global model on the server's test and
// validation sets.
func (s *server) Observe() optim.Stats {
	eval := func(d *datasets.Dataset) (float64, float64) {
		return s.loss.Loss(s.x, nil, d, nil), s.loss.Accuracy(s.x, d, nil)
	}
	st := optim.Stats{X: s.x}
	st.TestN, st.TestLoss, st.TestAcc = optim.Evaluate(s.test, eval)
	st.ValN, st.ValLoss, st.ValAcc = optim.Evaluate(s.val, eval)
	return st
}

// Result implements Resulter: the server's ServerResult.
func (s *server) Result() optim.Result {
	return ServerResult{UploadBytes: s.upBytes, UploadMessages: s.upMsgs, HyperUploadBytes: s.hyperBytes,
		HyperUploadMessages: s.hyperMsgs, HyperMessageFloats: s.hyperFloats, X: s.x}.Result()
}
