package optim

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/models"
)

// This file holds what the Comm-FedBiO family shares: the
// federated training loop of Alg. 1 with a per-sample λ-weighted loss, the
// server (node 0, holding the clean validation set and the test set) and
// the clients (holding noisy training sets and their own λ). The
// algorithms — comm-fedbio (commfedbio.go), fedavg-oracle and
// fedbio-preprocess (fedbio_baselines.go) — differ in how λ is set.
//
// One outer iteration k is P runtime rounds, each exchange a pair (down,
// up):
//
//	slot 0     server → S sampled clients: y_k
//	slot 1     clients: T local steps on g_m(λ, ·), upload y_T^m; the
//	           server forms y_{k+1} = y_k + Σ N_m (y_T^m − y_k) / Σ N_m
//	slot 2+2j  server → hyper clients: [y_{k+1}; v] (j = 0) or v     (j < J)
//	slot 3+2j  hyper clients → server: compressed H_m v, or A_m     (j < J)
//	slot 2+2J  server → hyper clients: v^I, or ω̂; each updates its λ
//	slot 3+2J  idle
//
// with J = 0 (P = 2, no hyper-gradient) for the baselines. Every message
// crosses a star link the edge process may drop: a missing upload is left
// out of the average, a client that missed the state sits the call out.

// FedBioTraining holds the training parameters shared by the family.
type FedBioTraining struct {
	Rounds        int     `yaml:"rounds" doc:"outer iterations K (communication rounds of Alg. 1), 1 … 10⁶"`
	Participation float64 `yaml:"participation" doc:"fraction S/M of the clients sampled per round (and per hyper-gradient call), in (0, 1]; at least one"`
	LocalSteps    int     `yaml:"local_steps" doc:"local SGD steps T per round, 1 … 10⁴ (the paper: 5)"`
	LR            float64 `yaml:"lr" doc:"local step size γ, finite, > 0 (the paper: 0.01)"`
	Batch         int     `yaml:"batch" doc:"local minibatch size, 0 (full batch) … 1048576 (the paper: 256)"`
	EvalEvery     int     `yaml:"eval_every" doc:"evaluate the global model on the server's test set every k outer iterations and after the last (0: only after the last)"`
}

func defaultFedBioTraining() FedBioTraining {
	return FedBioTraining{Rounds: 100, Participation: 1, LocalSteps: 5, LR: 0.01, Batch: 256, EvalEvery: 5}
}

func (t *FedBioTraining) validate(n int) error {
	switch {
	case t.Rounds < 1 || t.Rounds > 1_000_000:
		return fmt.Errorf("rounds must be in [1, 10⁶], got %d", t.Rounds)
	case !(t.Participation > 0 && t.Participation <= 1):
		return fmt.Errorf("participation must be in (0, 1], got %v", t.Participation)
	case t.LocalSteps < 1 || t.LocalSteps > 10_000:
		return fmt.Errorf("local_steps must be in [1, 10⁴], got %d", t.LocalSteps)
	case !(t.LR > 0) || math.IsInf(t.LR, 0):
		return fmt.Errorf("lr must be a finite number > 0, got %v", t.LR)
	case t.Batch < 0 || t.Batch > 1<<20:
		return fmt.Errorf("batch must be in [0, 1048576], got %d", t.Batch)
	case t.EvalEvery < 0:
		return fmt.Errorf("eval_every must be >= 0, got %d", t.EvalEvery)
	case n < 2:
		return fmt.Errorf("needs a server and at least one client")
	}
	return nil
}

// lambdaMode says how a client's λ is set.
type lambdaMode int

const (
	lambdaLearned lambdaMode = iota // Comm-FedBiO: λ = 1, then hyper-gradient steps
	lambdaOracle                    // λ_j = [label j is clean]
	lambdaFilter                    // Preprocess: λ_j = [p_bench(y_j | s_j) >= threshold]
)

// fedBioPlan is what an algorithm of the family asks of the shared
// machinery.
type fedBioPlan struct {
	train FedBioTraining
	mode  lambdaMode
	hyper *hyperPlan // nil: no hyper-gradient (J = 0)
	// Preprocess: the benchmark model's training on the validation set and
	// the filtering threshold.
	benchSteps int
	benchLR    float64
	threshold  float64
	totalN     float64 // N, the samples of all clients (set by build)
}

// hyperPlan configures the hyper-gradient of comm-fedbio.
type hyperPlan struct {
	iterative  bool
	compressor string // none, topk, sketch (iterative)
	iters      int    // I (iterative; J = I − 1 exchanges, the first step is free from v⁰ = 0)
	alpha      float64
	k          int // top-k / heavy hitters
	rows, cols int // sketch
	r1, r2     int // non-iterative
	hvpBatch   int
	eta        float64
	perSample  bool // drop the 1/N of ∂h/∂λ_j
	seed       uint64
}

// exchanges returns J.
func (h *hyperPlan) exchanges() int {
	if h == nil {
		return 0
	}
	if h.iterative {
		return h.iters - 1
	}
	return 1
}

// period returns P, the runtime rounds of one outer iteration.
func (p *fedBioPlan) period() int {
	if p.hyper == nil {
		return 2
	}
	return 4 + 2*p.hyper.exchanges()
}

// build returns the client factory and program of a plan.
func (p *fedBioPlan) build(s *Setup) (ClientFactory, Program, error) {
	c, ok := models.ClassifierOf(s.Model)
	if !ok {
		return nil, nil, fmt.Errorf("needs a plain classifier model (softmax, logistic or mlp without a head)")
	}
	loss := models.NewSampleWeighted(c)
	if s.Data[0].Val == nil || s.Data[0].Val.N == 0 {
		return nil, nil, fmt.Errorf("the server (node 0) has no validation data: use data kind noisy-labels")
	}
	m := s.Net.N - 1
	sizes := make([]float64, s.Net.N)
	for i := 1; i <= m; i++ {
		if s.Data[i].Train == nil || s.Data[i].Train.N == 0 {
			return nil, nil, fmt.Errorf("client %d has no training data", i)
		}
		sizes[i] = float64(s.Data[i].Train.N)
		p.totalN += sizes[i]
	}
	if p.hyper != nil && !p.hyper.iterative && p.hyper.r1 > p.hyper.r2 {
		return nil, nil, fmt.Errorf("non-iterative sketch sizes r1 = %d > r2 = %d: the least squares is underdetermined", p.hyper.r1, p.hyper.r2)
	}
	sample := max(1, int(math.Round(p.train.Participation*float64(m))))
	factory := func(i int) (Client, error) {
		if i == 0 {
			return &Fixed{newFedBioServer(p, s, loss.Clone(), m, sample, sizes)}, nil
		}
		c, err := newFedBioClient(p, s, loss.Clone(), i)
		if err != nil {
			return nil, err
		}
		return &Fixed{c}, nil
	}
	per := p.period()
	eval := 0
	if p.train.EvalEvery > 0 {
		eval = per * p.train.EvalEvery
	}
	var phases Phases
	if p.mode == lambdaFilter {
		phases = append(phases, PhaseSpec{Name: "preprocess", Rounds: 2, Tick: Continue})
	}
	// One training phase, cut at its evaluations so that the run can be
	// checkpointed between them.
	phases = append(phases, SplitPhase(PhaseSpec{Name: "comm-fedbio", Rounds: per * p.train.Rounds, EvalEvery: eval, Tick: Continue}, 1)...)
	return factory, &phases, nil
}

// messageFloats is what a message of n floats costs on the wire (the
// runtime's rule: 8 bytes per float and 8 for the header).
func messageBytes64(n int) int64 { return int64(8 * (n + 1)) }

// fedBioServer is node 0.
type fedBioServer struct {
	p            *fedBioPlan
	h            *hyperPlan
	loss         *models.SampleWeighted
	val, test    *models.Dataset
	m, sample    int
	sizes        []float64
	r            *rng.Stream
	x, acc       []float64
	gradF        []float64
	train, hyper []int
	out          [2][]float64
	flip         int
	// Iterative state.
	v, agg  []float64
	sketch  *compressSketch
	omega   []float64
	nonIter *nonIterServer
	// Measured uploads (delivered to the server), for the metrics.
	upBytes, upMsgs, hyperBytes, hyperMsgs int64
	hyperFloats                            int
}

func newFedBioServer(p *fedBioPlan, s *Setup, loss *models.SampleWeighted, m, sample int, sizes []float64) *fedBioServer {
	d := loss.Dim()
	srv := &fedBioServer{p: p, h: p.hyper, loss: loss, val: s.Data[0].Val, test: s.Test, m: m, sample: sample,
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

func (s *fedBioServer) send(out Outbox, to []int, kind Kind, parts ...[]float64) {
	s.flip ^= 1
	buf := s.out[s.flip][:0]
	for _, p := range parts {
		buf = append(buf, p...)
	}
	s.out[s.flip] = buf
	Send(out, to, Payload{Kind: kind, Vec: buf})
}

func (s *fedBioServer) Send(r *Round, out Outbox) error {
	if r.Phase == "preprocess" {
		if r.Index == 0 {
			return s.sendBenchmark(out)
		}
		return nil
	}
	per := s.p.period()
	slot := r.Index % per
	if slot%2 == 1 {
		return nil
	}
	switch {
	case slot == 0:
		s.train = SampleClients(s.r.Rand, s.m, s.sample, s.train)
		s.send(out, s.train, KindModel, s.x)
	case slot == 2:
		if s.h.iterative {
			s.send(out, s.hyper, KindModel, s.x, s.v)
		} else {
			s.send(out, s.hyper, KindModel, s.x)
		}
	case slot < per-2:
		s.send(out, s.hyper, KindUpdate, s.v)
	default: // slot per−2: the last word of the call
		if s.h.iterative {
			s.send(out, s.hyper, KindUpdate, s.v)
		} else {
			s.send(out, s.hyper, KindUpdate, s.omega)
		}
	}
	return nil
}

func (s *fedBioServer) Receive(r *Round, in []Message) error {
	if r.Phase == "preprocess" {
		return nil
	}
	per := s.p.period()
	slot := r.Index % per
	if slot%2 == 0 || (s.h != nil && slot == per-1) {
		return nil
	}
	var got []Message
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
		if !AllFinite(s.x) {
			return ErrNonFinite
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
func (s *fedBioServer) average(got []Message) {
	var total float64
	clear(s.acc)
	for _, m := range got {
		if m.Kind != KindModel || len(m.Vec) != len(s.x) {
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
func (s *fedBioServer) startHyper() {
	s.loss.Grad(s.gradF, s.x, nil, s.val, nil)
	floats.AddScaled(s.gradF, -s.loss.L2(), s.x) // F is the validation loss, without the regularizer
	s.hyper = SampleClients(s.r.Rand, s.m, s.sample, s.hyper)
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
func (s *fedBioServer) hyperStep(got []Message) error {
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
	if !AllFinite(s.v) {
		return fmt.Errorf("%w: the hyper-gradient iterate v (lower alpha)", ErrNonFinite)
	}
	return nil
}

// sendBenchmark (Preprocess) trains the benchmark model on the validation
// set and sends it to every client.
func (s *fedBioServer) sendBenchmark(out Outbox) error {
	g := make([]float64, len(s.x))
	bench := append([]float64(nil), s.x...)
	for range s.p.benchSteps {
		loss := s.loss.Grad(g, bench, nil, s.val, nil)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("%w: the benchmark model's loss (lower bench_lr)", ErrNonFinite)
		}
		floats.AddScaled(bench, -s.p.benchLR, g)
	}
	all := make([]int, s.m)
	for i := range all {
		all[i] = i + 1
	}
	s.send(out, all, KindModel, bench)
	return nil
}

// Observe implements Observer: the global model on the server's test and
// validation sets.
func (s *fedBioServer) Observe() Stats {
	st := Stats{X: s.x}
	if s.test != nil && s.test.N > 0 {
		st.TestN = s.test.N
		st.TestLoss = s.loss.Loss(s.x, nil, s.test, nil)
		st.TestAcc = s.loss.Accuracy(s.x, s.test, nil)
	}
	st.ValN = s.val.N
	st.ValLoss = s.loss.Loss(s.x, nil, s.val, nil)
	st.ValAcc = s.loss.Accuracy(s.x, s.val, nil)
	return st
}

// Result implements Resulter: what the server received, measured.
func (s *fedBioServer) Result() Result {
	return Result{Values: map[string]float64{
		"upload_bytes": float64(s.upBytes), "upload_messages": float64(s.upMsgs),
		"hyper_upload_bytes": float64(s.hyperBytes), "hyper_upload_messages": float64(s.hyperMsgs),
		"hyper_message_floats": float64(s.hyperFloats),
	}, Vectors: map[string][]float64{"x": s.x}}
}

// fedBioClient is one of nodes 1 … m.
type fedBioClient struct {
	p      *fedBioPlan
	h      *hyperPlan
	id     int
	loss   *models.SampleWeighted
	data   *models.Dataset
	noisy  []bool
	lambda []float64
	active []int // rows the local minibatches are drawn from
	batch  *Batcher
	hyperR *rng.Stream
	x, g   []float64
	v, hv  []float64
	hidx   []int
	dir    []float64
	train  bool // sampled for local training this round
	inCall bool // holds the state of the current hyper-gradient call
	out    [2][]float64
	flip   int
	topk   *topkClient
	sketch *compressSketch
	nonIt  *nonIterClient
}

func newFedBioClient(p *fedBioPlan, s *Setup, loss *models.SampleWeighted, i int) (*fedBioClient, error) {
	data := s.Data[i].Train
	d := loss.Dim()
	c := &fedBioClient{p: p, h: p.hyper, id: i, loss: loss, data: data, noisy: s.Data[i].Noisy,
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
	c.batch = NewBatcher(max(1, len(c.active)), p.train.Batch, rng.NewStream(s.Seed, i, rng.PurposeBatch))
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
func (c *fedBioClient) setActive() {
	c.active = c.active[:0]
	for j := range c.data.N {
		if c.p.mode == lambdaLearned || c.lambda[j] > 0 {
			c.active = append(c.active, j)
		}
	}
	if c.batch != nil {
		c.batch = NewBatcher(max(1, len(c.active)), c.p.train.Batch, c.batch.r)
	}
}

func (c *fedBioClient) upload(out Outbox, kind Kind, vec []float64) {
	c.flip ^= 1
	c.out[c.flip] = append(c.out[c.flip][:0], vec...)
	Send(out, []int{0}, Payload{Kind: kind, Vec: c.out[c.flip]})
}

func (c *fedBioClient) Receive(r *Round, in []Message) error {
	if r.Phase == "preprocess" {
		if r.Index == 0 {
			for _, m := range in {
				if m.From == 0 && m.Kind == KindModel && len(m.Vec) == len(c.x) {
					c.filter(m.Vec)
				}
			}
		}
		return nil
	}
	per := c.p.period()
	slot := r.Index % per
	if slot%2 == 1 {
		return nil
	}
	var msg *Message
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

func (c *fedBioClient) drawHyperBatch() {
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
func (c *fedBioClient) updateLambda() error {
	c.loss.SampleDirectional(c.dir, c.x, c.data, nil, c.v)
	scale := 1.0
	if !c.h.perSample {
		scale = 1 / c.p.totalN
	}
	for j, dj := range c.dir {
		if math.IsNaN(dj) || math.IsInf(dj, 0) {
			return fmt.Errorf("%w: hyper-gradient block of sample %d", ErrNonFinite, j)
		}
		c.lambda[j] = min(1, max(0, c.lambda[j]+c.h.eta*scale*dj))
	}
	return nil
}

func (c *fedBioClient) Send(r *Round, out Outbox) error {
	if r.Phase == "preprocess" {
		return nil
	}
	per := c.p.period()
	slot := r.Index % per
	if slot%2 == 0 || (c.h != nil && slot == per-1) {
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
					return fmt.Errorf("%w: the local training loss is %v (lower lr)", ErrNonFinite, loss)
				}
				floats.AddScaled(c.x, -c.p.train.LR, c.g)
			}
		}
		c.upload(out, KindModel, c.x)
		return nil
	}
	if !c.inCall {
		return nil
	}
	h := c.h
	if !h.iterative {
		c.upload(out, KindUpdate, c.nonIt.sketchHessian(c.loss, c.x, c.lambda, c.data, c.hidx))
		return nil
	}
	c.loss.HVP(c.hv, c.x, c.lambda, c.data, c.hidx, c.v)
	switch h.compressor {
	case "none":
		c.upload(out, KindUpdate, c.hv)
	case "topk":
		floats.Scale(h.alpha, c.hv)
		c.upload(out, KindUpdate, c.topk.message(c.hv))
	case "sketch":
		c.upload(out, KindUpdate, c.sketch.table(c.hv))
	}
	return nil
}

// filter (Preprocess) keeps the samples whose label the benchmark model
// gives probability >= threshold.
func (c *fedBioClient) filter(bench []float64) {
	for j := range c.data.N {
		if c.loss.Probability(bench, c.data, j) >= c.p.threshold {
			c.lambda[j] = 1
		} else {
			c.lambda[j] = 0
		}
	}
	c.setActive()
}

// Result implements Resulter: the client's λ and its mislabel detection
// counts (positive = label changed, predicted when λ < 0.5).
func (c *fedBioClient) Result() Result {
	var tp, fp, fn float64
	for j, l := range c.lambda {
		pred := l < 0.5
		switch {
		case pred && c.noisy[j]:
			tp++
		case pred:
			fp++
		case c.noisy[j]:
			fn++
		}
	}
	return Result{Values: map[string]float64{"tp": tp, "fp": fp, "fn": fn, "n": float64(len(c.lambda))},
		Vectors: map[string][]float64{"weights": c.lambda}}
}

// F1 returns the F1 score of mislabel detection from the clients' results
// (zero when there is nothing to detect or nothing was predicted).
func F1(results []Result) (f1, precision, recall float64) {
	var tp, fp, fn float64
	for _, r := range results {
		tp += r.Values["tp"]
		fp += r.Values["fp"]
		fn += r.Values["fn"]
	}
	if tp == 0 {
		return 0, 0, 0
	}
	precision, recall = tp/(tp+fp), tp/(tp+fn)
	return 2 * precision * recall / (precision + recall), precision, recall
}

// Checkpoints. The run's main phase is cut at evaluated rounds, so the
// state is everything that lives across rounds, at whatever slot of an
// outer iteration the cut falls: the server's global model, ∇F of the
// current call, the iterate v, the sketch's server-side error, the last
// ω̂ (kept when no upload arrives), the two samples, the sampling stream
// and the upload counters; a client's λ (the preprocess filter's result
// included; the rows it trains on follow from λ), its model copy, v, the
// rows its Hessian-vector products of the current call use, its flags,
// its top-k error feedback and the positions of its minibatch and HVP-row
// streams. The sketch matrices are a pure function of the scenario's
// seed; send buffers, aggregates cleared before use (acc, agg, the
// non-iterative A and b) and per-call outputs (Hv, the directional
// derivatives, the sketched Hessian) are scratch.

// variant names a plan's λ mode and hyper-gradient, to refuse the state
// of another algorithm or variant.
func (p *fedBioPlan) variant() string {
	var mode string
	switch p.mode {
	case lambdaLearned:
		mode = "comm-fedbio"
	case lambdaOracle:
		mode = "fedavg-oracle"
	case lambdaFilter:
		mode = "fedbio-preprocess"
	}
	switch {
	case p.hyper == nil:
		return mode + ", no hyper-gradient"
	case !p.hyper.iterative:
		return mode + ", non-iterative"
	}
	return mode + ", iterative, compressor " + p.hyper.compressor
}

// fedBioServerState is what a fedBioServer carries across rounds. A
// vector the variant does not use is nil.
type fedBioServerState struct {
	Kind    string // "fedbio-server", checked on load
	Variant string // fedBioPlan.variant, checked on load
	X       []float64
	GradF   []float64 // ∇F of the current call
	V       []float64 // the iterate (iterative)
	ErrTab  []float64 // the sketch's server-side error
	Omega   []float64 // the last ω̂ (non-iterative; nil before the first)
	Train   []int     // the last training sample
	Hyper   []int     // the sample of the current call
	RNG     []byte    // the sampling stream
	// The measured uploads.
	UpBytes, UpMsgs, HyperBytes, HyperMsgs int64
	HyperFloats                            int
}

// SaveState implements Stateful.
func (s *fedBioServer) SaveState() ([]byte, error) {
	r, err := s.r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := fedBioServerState{Kind: "fedbio-server", Variant: s.p.variant(), X: s.x, GradF: s.gradF, V: s.v,
		Omega: s.omega, Train: s.train, Hyper: s.hyper, RNG: r,
		UpBytes: s.upBytes, UpMsgs: s.upMsgs, HyperBytes: s.hyperBytes, HyperMsgs: s.hyperMsgs, HyperFloats: s.hyperFloats}
	if s.sketch != nil {
		st.ErrTab = s.sketch.errTab
	}
	return EncodeState(st)
}

// LoadState implements Stateful.
func (s *fedBioServer) LoadState(b []byte) error {
	var st fedBioServerState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	const who = "fedbio server"
	if st.Kind != "fedbio-server" {
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	}
	if v := s.p.variant(); st.Variant != v {
		return fmt.Errorf("%s: a saved state of %s for %s", who, st.Variant, v)
	}
	errTab, omega := 0, 0
	if s.sketch != nil {
		errTab = len(s.sketch.errTab)
	}
	if s.nonIter != nil {
		omega = s.h.r1
	}
	if err := CheckLens(who, map[string][2]int{
		"x": {len(st.X), len(s.x)}, "∇F": {len(st.GradF), len(s.gradF)}, "v": {len(st.V), len(s.v)},
		"sketch error": {len(st.ErrTab), errTab}, "ω̂": {len(st.Omega), omega},
	}, map[string]bool{"ω̂": st.Omega == nil}); err != nil {
		return err
	}
	if err := checkSample(who+" (training)", st.Train, s.m, s.sample); err != nil {
		return err
	}
	if err := checkSample(who+" (hyper-gradient)", st.Hyper, s.m, s.sample); err != nil {
		return err
	}
	if st.UpBytes < 0 || st.UpMsgs < 0 || st.HyperBytes < 0 || st.HyperMsgs < 0 || st.HyperFloats < 0 {
		return fmt.Errorf("%s: negative saved upload counts", who)
	}
	if err := s.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%s: sampling stream: %w", who, err)
	}
	copy(s.x, st.X)
	copy(s.gradF, st.GradF)
	copy(s.v, st.V)
	if s.sketch != nil {
		copy(s.sketch.errTab, st.ErrTab)
	}
	s.omega = slices.Clone(st.Omega)
	s.train = append(s.train[:0], st.Train...)
	s.hyper = append(s.hyper[:0], st.Hyper...)
	s.upBytes, s.upMsgs, s.hyperBytes, s.hyperMsgs = st.UpBytes, st.UpMsgs, st.HyperBytes, st.HyperMsgs
	s.hyperFloats = st.HyperFloats
	return nil
}

// fedBioClientState is what a fedBioClient carries across rounds. A
// vector the variant does not use is nil.
type fedBioClientState struct {
	Kind    string // "fedbio-client", checked on load
	Variant string // fedBioPlan.variant, checked on load
	ID      int
	Lambda  []float64
	X       []float64
	V       []float64 // the iterate of the current call (hyper-gradient)
	Hidx    []int     // the HVP rows of the current call (nil: all)
	Train   bool      // sampled for local training
	InCall  bool      // holds the state of the current call
	Batch   BatcherState
	HyperR  []byte    // the HVP-row stream
	TopkErr []float64 // top-k error feedback of the current call
}

// SaveState implements Stateful.
func (c *fedBioClient) SaveState() ([]byte, error) {
	bs, err := c.batch.save()
	if err != nil {
		return nil, err
	}
	hr, err := c.hyperR.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := fedBioClientState{Kind: "fedbio-client", Variant: c.p.variant(), ID: c.id, Lambda: c.lambda, X: c.x,
		V: c.v, Hidx: c.hidx, Train: c.train, InCall: c.inCall, Batch: bs, HyperR: hr}
	if c.topk != nil {
		st.TopkErr = c.topk.fb.Error()
	}
	return EncodeState(st)
}

// LoadState implements Stateful. It checks the whole state before it
// changes the client, so a refused state leaves the client as it was.
func (c *fedBioClient) LoadState(b []byte) error {
	var st fedBioClientState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	who := fmt.Sprintf("fedbio client %d", c.id)
	if st.Kind != "fedbio-client" {
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	}
	if v := c.p.variant(); st.Variant != v {
		return fmt.Errorf("%s: a saved state of %s for %s", who, st.Variant, v)
	}
	if st.ID != c.id {
		return fmt.Errorf("%s: a saved state of client %d", who, st.ID)
	}
	topk := 0
	if c.topk != nil {
		topk = len(c.x)
	}
	if err := CheckLens(who, map[string][2]int{
		"λ": {len(st.Lambda), len(c.lambda)}, "x": {len(st.X), len(c.x)}, "v": {len(st.V), len(c.v)},
		"top-k error": {len(st.TopkErr), topk},
	}, nil); err != nil {
		return err
	}
	active := 0
	for j, l := range st.Lambda {
		if !(l >= 0 && l <= 1) {
			return fmt.Errorf("%s: a saved λ_%d = %v outside [0, 1]", who, j, l)
		}
		if c.p.mode == lambdaOracle && (l == 0) != c.noisy[j] {
			return fmt.Errorf("%s: a saved λ_%d = %v that is not the oracle's", who, j, l)
		}
		if c.p.mode == lambdaLearned || l > 0 {
			active++
		}
	}
	n := c.data.N
	switch {
	case c.h == nil || c.h.hvpBatch <= 0 || c.h.hvpBatch >= n:
		if len(st.Hidx) != 0 {
			return fmt.Errorf("%s: %d saved HVP rows, the run uses all rows", who, len(st.Hidx))
		}
	case len(st.Hidx) != 0 && len(st.Hidx) != c.h.hvpBatch:
		return fmt.Errorf("%s: %d saved HVP rows, the run draws %d", who, len(st.Hidx), c.h.hvpBatch)
	}
	seen := make(map[int]bool, len(st.Hidx))
	for _, i := range st.Hidx {
		if i < 0 || i >= n || seen[i] {
			return fmt.Errorf("%s: the saved HVP rows hold row %d twice or outside 0 … %d", who, i, n-1)
		}
		seen[i] = true
	}
	if c.h == nil && st.InCall {
		return fmt.Errorf("%s: a saved hyper-gradient call, the run has none", who)
	}
	if len(st.Batch.Perm) != max(1, active) || !IsPerm(st.Batch.Perm) || st.Batch.Pos < 0 || st.Batch.Pos > len(st.Batch.Perm) {
		return fmt.Errorf("%s: the saved minibatch order is no permutation of the %d rows λ keeps", who, max(1, active))
	}
	for _, r := range []struct {
		name string
		b    []byte
	}{{"minibatch", st.Batch.RNG}, {"HVP-row", st.HyperR}} {
		if err := rng.NewStream(0, 0, 0).UnmarshalBinary(r.b); err != nil { // a scratch stream
			return fmt.Errorf("%s: %s stream: %w", who, r.name, err)
		}
	}
	// Everything fits: load.
	copy(c.lambda, st.Lambda)
	c.setActive() // rebuilds the batcher over the kept rows
	if err := c.batch.load(st.Batch); err != nil {
		return fmt.Errorf("%s: %w", who, err) // checked above: cannot happen
	}
	if err := c.hyperR.UnmarshalBinary(st.HyperR); err != nil {
		return fmt.Errorf("%s: HVP-row stream: %w", who, err)
	}
	copy(c.x, st.X)
	copy(c.v, st.V)
	c.hidx = slices.Clone(st.Hidx)
	c.train, c.inCall = st.Train, st.InCall
	if c.topk != nil {
		if err := c.topk.fb.SetError(st.TopkErr); err != nil {
			return fmt.Errorf("%s: %w", who, err)
		}
	}
	return nil
}
