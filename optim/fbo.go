package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/models"
)

// Federated bilevel optimization with a server: the pieces FedNest,
// LFedNest (Tarzanagh et al. 2022) and FBO-AggITD (fbo-aggitd paper,
// Alg. 1–4) share.
//
// Names follow the fbo-aggitd paper: x is the OUTER variable, y the INNER
// one, g_i = G_i(x, y) the lower cost on client i's training part, f_i =
// F_i(x, y) the upper cost on its validation part. In models.Bilevel the
// inner variable is called x and the outer λ, so a call reads
// model.InnerGrad(dst, y, x, …).
//
// A communication round (Table 1) is two runtime rounds: in the first the
// server sends to the participating clients S (what they need, e.g. y or an
// aggregate), in the second the clients of S upload and the server averages
// what arrived. The clients S (participation·m of them) are drawn by the
// server once per outer iteration from its own stream. One phase of the
// program holds eval_every outer iterations; its Args carry the per-
// iteration draws (AggITD's Q, FedNest's T'), drawn by the program from the
// server's scheduling stream (seed, node 0, PurposeDraw), so that server and
// clients know the schedule of the phase's rounds.

// FBOParams are the parameters the federated bilevel algorithms share.
type FBOParams struct {
	OuterSteps    int     `yaml:"outer_steps" doc:"outer iterations K, 1 … 10⁶"`
	Participation float64 `yaml:"participation" doc:"fraction C of the m clients the server samples per outer iteration, in (0, 1]; at least one"`
	LowerSteps    int     `yaml:"lower_steps" doc:"N, lower-level iterations per outer iteration, 1 … 10⁴"`
	Beta          float64 `yaml:"beta" doc:"inner step β of One-Round-Lower, finite, > 0"`
	Alpha         float64 `yaml:"alpha" doc:"outer step α of One-Round-Upper, finite, > 0"`
	Lambda        float64 `yaml:"lambda" doc:"the constant λ of the Hessian-inverse approximation (I − λ∇²_yy g), finite, > 0"`
	Tau           int     `yaml:"tau" doc:"local x steps τ of One-Round-Upper, 1 … 10⁴"`
	LowerLocal    int     `yaml:"lower_local" doc:"local y steps τ_i of One-Round-Lower, 1 … 10⁴"`
	Lower         string  `yaml:"lower" doc:"One-Round-Lower type: svrg (FedSVRG, Alg. 2: q_v = ∇G_i(y_v) − ∇G_i(y) + q) or sgd (FedAvg local steps)"`
	Batch         int     `yaml:"batch" doc:"minibatch size of every stochastic gradient and product, 0 … 1048576 (0: full batch)"`
	EvalEvery     int     `yaml:"eval_every" doc:"evaluate the global model (server's test data) every k outer iterations and after the last, 1 … 10⁴ (a phase of k iterations)"`
}

func defaultFBO() FBOParams {
	return FBOParams{OuterSteps: 100, Participation: 0.1, LowerSteps: 5, Beta: 0.003, Alpha: 0.01, Lambda: 0.01,
		Tau: 1, LowerLocal: 1, Lower: "svrg", Batch: 64, EvalEvery: 5}
}

// Validate checks the shared parameters for n nodes (server included).
func (p *FBOParams) Validate(n int) error {
	fin := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case p.OuterSteps < 1 || p.OuterSteps > 1_000_000:
		return fmt.Errorf("outer_steps must be in [1, 10⁶], got %d", p.OuterSteps)
	case !(p.Participation > 0 && p.Participation <= 1):
		return fmt.Errorf("participation must be in (0, 1], got %v", p.Participation)
	case p.LowerSteps < 1 || p.LowerSteps > 10_000:
		return fmt.Errorf("lower_steps must be in [1, 10⁴], got %d", p.LowerSteps)
	case !fin(p.Beta):
		return fmt.Errorf("beta must be a finite number > 0, got %v", p.Beta)
	case !fin(p.Alpha):
		return fmt.Errorf("alpha must be a finite number > 0, got %v", p.Alpha)
	case !fin(p.Lambda):
		return fmt.Errorf("lambda must be a finite number > 0, got %v", p.Lambda)
	case p.Tau < 1 || p.Tau > 10_000:
		return fmt.Errorf("tau must be in [1, 10⁴], got %d", p.Tau)
	case p.LowerLocal < 1 || p.LowerLocal > 10_000:
		return fmt.Errorf("lower_local must be in [1, 10⁴], got %d", p.LowerLocal)
	case p.Lower != "svrg" && p.Lower != "sgd":
		return fmt.Errorf("lower must be svrg or sgd, got %q", p.Lower)
	case p.Batch < 0 || p.Batch > 1<<20:
		return fmt.Errorf("batch must be in [0, 1048576], got %d", p.Batch)
	case p.EvalEvery < 1 || p.EvalEvery > 10_000:
		return fmt.Errorf("eval_every must be in [1, 10⁴], got %d", p.EvalEvery)
	case n < 2:
		return fmt.Errorf("needs a server and at least one client")
	}
	return nil
}

// stageKind is what one communication round does.
type stageKind uint8

const (
	stLowerA     stageKind = iota + 1 // up: q_i = ∇_yG_i(y^t) [and AggITD's r_i or z_i]
	stLowerB                          // down: q^t; One-Round-Lower; up: y_i
	stLowerLocal                      // down: y^t; τ_i local SGD steps; up: y_i (LFedNest)
	stP0                              // down: y^N; up: ∇_yF_i (FedNest's p₀)
	stNeumann                         // down: p_{t−1}; up: (I − λ∇²_yyG_i)p_{t−1}
	stHyper                           // down: p; up: h_i = ∇_xF_i − ∇²_xyG_i·p
	stUpper                           // down: h; One-Round-Upper; up: x_i
	stLocalUpper                      // down: y^N; local Neumann, h_i, τ local steps; up: x_i (LFedNest)
)

// stage is one communication round of a phase.
type stage struct {
	kind  stageKind
	iter  int  // outer iteration within the phase
	first bool // the iteration's first round: the down message starts with x
	t     int  // lower iteration (stLowerA, stLowerB, stLowerLocal) or Neumann index
	q     int  // AggITD's Q for the iteration (-1: not AggITD)
	last  bool // the iteration's last Neumann round
}

// fboMethod is one of the three algorithms: its rounds and its client's
// local computations.
type fboMethod interface {
	params() *FBOParams
	// draws returns the per-iteration draw of the program (Q or T'; -1
	// when the method draws nothing).
	draw(r *rand.Rand) int
	// schedule appends the communication rounds of one outer iteration
	// with draw d.
	schedule(st []stage, iter, d int) []stage
	// hyperScale returns the p the server broadcasts in stHyper, from its
	// aggregates.
	hyperP(dst []float64, s *fboServer)
}

// fboProgram runs K outer iterations in phases of eval_every.
type fboProgram struct {
	name string
	m    fboMethod
	done int
	r    *rng.Stream
}

// Next implements Program.
func (p *fboProgram) Next(*PhaseReport) (*PhaseSpec, error) {
	pp := p.m.params()
	if p.done >= pp.OuterSteps {
		return nil, nil
	}
	k := min(pp.EvalEvery, pp.OuterSteps-p.done)
	args := map[string]float64{"iters": float64(k)}
	var st []stage
	rounds := 0
	for j := range k {
		d := p.m.draw(p.r.Rand)
		args["draw"+strconv.Itoa(j)] = float64(d)
		st = p.m.schedule(st[:0], j, d)
		rounds += len(st)
	}
	spec := &PhaseSpec{Name: p.name, Rounds: 2 * rounds, Step: p.done, Tick: Continue, Args: args}
	p.done += k
	return spec, nil
}

// schedule is the rounds of one phase, built one outer iteration at a
// time (a phase may hold many iterations of many rounds each).
type schedule struct {
	m      fboMethod
	starts []int // communication round at which each iteration starts, and the total
	draws  []int
	iter   int
	cur    []stage
}

// phaseSchedule reads the schedule of a phase from its Args.
func phaseSchedule(m fboMethod, spec *PhaseSpec) (*schedule, error) {
	k := int(spec.Arg("iters", 0))
	sc := &schedule{m: m, starts: make([]int, 1, k+1), draws: make([]int, k), iter: -1}
	for j := range k {
		d, ok := spec.Args["draw"+strconv.Itoa(j)]
		if !ok {
			return nil, fmt.Errorf("phase %s: draw %d missing", spec.Name, j)
		}
		sc.draws[j] = int(d)
		sc.cur = m.schedule(sc.cur[:0], j, int(d))
		sc.starts = append(sc.starts, sc.starts[j]+len(sc.cur))
	}
	if 2*sc.starts[k] != spec.Rounds {
		return nil, fmt.Errorf("phase %s: %d rounds, the schedule has %d", spec.Name, spec.Rounds, 2*sc.starts[k])
	}
	return sc, nil
}

// at returns communication round c of the phase.
func (sc *schedule) at(c int) stage {
	j := sort.SearchInts(sc.starts, c+1) - 1
	if j != sc.iter {
		sc.cur = sc.m.schedule(sc.cur[:0], j, sc.draws[j])
		sc.iter = j
	}
	return sc.cur[c-sc.starts[j]]
}

// planFBO builds the factory and program of a federated bilevel method.
func planFBO(name string, m fboMethod, s *Setup) (ClientFactory, Program, error) {
	pp := m.params()
	n := s.Net.N
	clients := n - 1
	sample := max(1, int(math.Round(pp.Participation*float64(clients))))
	x0 := make([]float64, s.Model.DimLambda())
	if li, ok := s.Model.(models.LambdaInitializer); ok {
		li.InitLambda(x0, rng.New(s.Seed, 0, rng.PurposeInit))
	}
	for i := 1; i < n; i++ {
		if s.Data[i].Train == nil || s.Data[i].Train.N == 0 || s.Data[i].Val == nil || s.Data[i].Val.N == 0 {
			return nil, nil, fmt.Errorf("client %d has no training or validation data", i)
		}
	}
	factory := func(i int) (Client, error) {
		if i == 0 {
			return &fboServer{method: m, p: pp, x: slices.Clone(x0), y: slices.Clone(s.X0), m: clients, sample: sample,
				r: rng.NewStream(s.Seed, 0, rng.PurposeSample), model: s.Model.Clone(), test: s.Test}, nil
		}
		return newFBOClient(i, m, s, x0), nil
	}
	return factory, &fboProgram{name: name, m: m, r: rng.NewStream(s.Seed, 0, rng.PurposeDraw)}, nil
}

// fboServer is node 0: it samples S, broadcasts and averages.
type fboServer struct {
	method    fboMethod
	p         *FBOParams
	x, y      []float64 // global outer and inner variables
	q, z, h   []float64 // aggregates: lower gradient, AggITD's z, hyper-gradient
	pcur      []float64 // FedNest's current Neumann term
	psum      []float64 // FedNest's sum of Neumann terms
	m, sample int
	r         *rng.Stream
	chosen    []int
	model     models.Bilevel
	test      *models.Dataset
	stages    *schedule
	out       [2][]float64
	flip      int
	acc       [][]float64 // per part of the upload: running sums
}

// Enter implements Client.
func (s *fboServer) Enter(spec *PhaseSpec) (Behaviour, error) {
	st, err := phaseSchedule(s.method, spec)
	if err != nil {
		return nil, err
	}
	s.stages = st
	return s, nil
}

func (s *fboServer) send(out Outbox, parts ...[]float64) {
	s.flip ^= 1
	v := s.out[s.flip][:0]
	for _, p := range parts {
		v = append(v, p...)
	}
	s.out[s.flip] = v
	Send(out, s.chosen, Payload{Kind: KindModel, Vec: v})
}

// Send implements Behaviour: the server's half of a communication round.
func (s *fboServer) Send(r *Round, out Outbox) error {
	if r.Index%2 == 1 {
		return nil
	}
	st := s.stages.at(r.Index / 2)
	var pre []float64
	if st.first {
		// A new outer iteration: draw S from the server's own stream.
		perm := s.r.Perm(s.m)[:s.sample]
		s.chosen = s.chosen[:0]
		for _, p := range perm {
			s.chosen = append(s.chosen, p+1)
		}
		slices.Sort(s.chosen)
		pre = s.x
	}
	switch st.kind {
	case stLowerA:
		if st.q >= 0 && st.t > st.q {
			s.send(out, pre, s.y, s.z)
		} else {
			s.send(out, pre, s.y)
		}
	case stLowerB:
		s.send(out, pre, s.q)
	case stLowerLocal, stP0, stLocalUpper:
		s.send(out, pre, s.y)
	case stNeumann:
		s.send(out, pre, s.pcur)
	case stHyper:
		p := make([]float64, len(s.y))
		s.method.hyperP(p, s)
		s.send(out, pre, p)
	case stUpper:
		s.send(out, pre, s.h)
	}
	return nil
}

// Receive implements Behaviour: the server averages the uploads that
// arrived (a lost upload is missing from the mean; with none, the
// aggregate keeps its previous value).
func (s *fboServer) Receive(r *Round, in []Message) error {
	if r.Index%2 == 0 {
		return nil
	}
	st := s.stages.at(r.Index / 2)
	dy, dx := len(s.y), len(s.x)
	var sizes []int
	switch st.kind {
	case stLowerA:
		sizes = []int{dy}
		if st.q >= 0 && st.t >= st.q {
			sizes = []int{dy, dy}
		}
	case stLowerB, stLowerLocal, stP0, stNeumann:
		sizes = []int{dy}
	case stHyper, stUpper, stLocalUpper:
		sizes = []int{dx}
	}
	mean, ok := s.average(in, sizes, r.Index)
	switch st.kind {
	case stLowerA:
		if ok {
			s.q = setVec(s.q, mean[0])
		} else if s.q == nil {
			s.q = make([]float64, dy)
		}
		if len(sizes) == 2 {
			if ok {
				s.z = setVec(s.z, mean[1])
			} else if st.t == st.q || s.z == nil {
				s.z = setVec(s.z, make([]float64, dy)) // no r arrived: p = 0
			}
		}
	case stLowerB, stLowerLocal:
		if ok {
			copy(s.y, mean[0])
		}
	case stP0:
		s.pcur = setVec(s.pcur, make([]float64, dy))
		if ok {
			copy(s.pcur, mean[0])
		}
		s.psum = setVec(s.psum, s.pcur)
	case stNeumann:
		if ok {
			copy(s.pcur, mean[0])
		}
		floats.Add(s.psum, s.pcur)
	case stHyper:
		s.h = setVec(s.h, make([]float64, dx))
		if ok {
			copy(s.h, mean[0])
		}
	case stUpper, stLocalUpper:
		if ok {
			copy(s.x, mean[0])
		}
	}
	if !AllFinite(s.x) || !AllFinite(s.y) {
		return fmt.Errorf("%w in the global model after %s round %d (lower beta or alpha)", ErrNonFinite, stageName(st.kind), r.Index/2)
	}
	return nil
}

// average returns the means of the parts of the uploads that arrived.
func (s *fboServer) average(in []Message, sizes []int, round int) ([][]float64, bool) {
	total := 0
	for _, n := range sizes {
		total += n
	}
	if len(s.acc) < len(sizes) {
		s.acc = append(s.acc, make([][]float64, len(sizes)-len(s.acc))...)
	}
	acc := s.acc[:len(sizes)]
	for k, n := range sizes {
		if len(acc[k]) != n {
			acc[k] = make([]float64, n)
		}
		clear(acc[k])
	}
	got := 0
	for _, m := range in {
		// An upload delayed past its round answers another stage: stale,
		// it counts as lost.
		if m.From == 0 || m.Round != round || len(m.Vec) != total {
			continue
		}
		off := 0
		for k, n := range sizes {
			floats.Add(acc[k], m.Vec[off:off+n])
			off += n
		}
		got++
	}
	if got == 0 {
		return nil, false
	}
	for _, a := range acc {
		floats.Scale(1/float64(got), a)
	}
	return acc, true
}

// setVec copies src into dst, reallocating when the length differs.
func setVec(dst, src []float64) []float64 {
	if len(dst) != len(src) {
		dst = make([]float64, len(src))
	}
	copy(dst, src)
	return dst
}

// Observe implements Observer: the global (y, x) on the server's test data.
func (s *fboServer) Observe() Stats {
	st := Stats{X: s.x}
	if s.test != nil && s.test.N > 0 {
		st.TestN = s.test.N
		st.TestLoss = s.model.InnerLoss(s.y, s.x, s.test, nil)
		st.TestAcc = s.model.Accuracy(s.y, s.x, s.test, nil)
	}
	return st
}

func stageName(k stageKind) string {
	return [...]string{"", "lower-a", "lower-b", "lower-local", "p0", "neumann", "hyper", "upper", "local-upper"}[k]
}

// fboClient is client i: it computes what each round asks on its data.
type fboClient struct {
	id     int
	method fboMethod
	p      *FBOParams
	model  models.Bilevel
	train  *models.Dataset // G_i
	val    *models.Dataset // F_i
	gb, fb *Batcher        // minibatches of G_i and F_i
	stages *schedule

	x, y       []float64 // the iteration's outer point and current inner point
	xv, yv     []float64 // local iterates
	in         []float64 // the down message's payload (after x)
	active     int       // outer iteration this client takes part in (-1: none)
	have       bool      // got this round's down message
	gy, gy0    []float64 // gradients in y
	gx, gx0    []float64 // gradients in x
	hv, tmp    []float64
	tmpY, tmpX []float64 // scratch of OuterGrad's unwanted part
	local      []float64 // LFedNest's local p
	out        [2][]float64
	flip       int
	idxA       []int
	sameBatch  bool // One-Round-Upper's correction on the sample of the step (FedNest) or a fresh one (FBO-AggITD)
}

func newFBOClient(i int, m fboMethod, s *Setup, x0 []float64) *fboClient {
	dy, dx := s.Model.DimX(), s.Model.DimLambda()
	pp := m.params()
	_, same := m.(*FedNest)
	_, lf := m.(*LFedNest)
	return &fboClient{id: i, method: m, p: pp, model: s.Model.Clone(), train: s.Data[i].Train, val: s.Data[i].Val,
		gb: NewBatcher(s.Data[i].Train.N, pp.Batch, rng.NewStream(s.Seed, i, rng.PurposeBatch)),
		fb: NewBatcher(s.Data[i].Val.N, pp.Batch, rng.NewStream(s.Seed, i, rng.PurposeHyper)),
		x:  slices.Clone(x0), y: make([]float64, dy), xv: make([]float64, dx), yv: make([]float64, dy),
		gy: make([]float64, dy), gy0: make([]float64, dy), gx: make([]float64, dx), gx0: make([]float64, dx),
		hv: make([]float64, dy), tmp: make([]float64, dy), tmpY: make([]float64, dy), active: -1, sameBatch: same || lf}
}

// Enter implements Client.
func (c *fboClient) Enter(spec *PhaseSpec) (Behaviour, error) {
	st, err := phaseSchedule(c.method, spec)
	if err != nil {
		return nil, err
	}
	c.stages = st
	c.active = -1
	return c, nil
}

// Receive implements Behaviour: the down half of a round.
func (c *fboClient) Receive(r *Round, in []Message) error {
	if r.Index%2 == 1 {
		return nil
	}
	st := c.stages.at(r.Index / 2)
	c.have = false
	for _, m := range in {
		// A server message delayed past its round belongs to another
		// stage (a vector of another meaning, maybe of another length):
		// stale, it counts as lost.
		if m.From != 0 || m.Round != r.Index {
			continue
		}
		v := m.Vec
		if st.first {
			if len(v) < len(c.x) {
				return fmt.Errorf("client %d: short message from the server (%d values)", c.id, len(v))
			}
			copy(c.x, v[:len(c.x)])
			v = v[len(c.x):]
			c.active = st.iter
		}
		if c.active != st.iter {
			continue // missed the iteration's first message: sit it out
		}
		c.in = append(c.in[:0], v...)
		c.have = true
	}
	return nil
}

// batch returns a fresh minibatch of b (nil: full batch), copied so that a
// later draw cannot change it.
func batch(dst []int, b *Batcher) []int {
	idx := b.Next()
	if idx == nil {
		return nil
	}
	return append(dst[:0], idx...)
}

// Send implements Behaviour: the up half, the client's computation.
func (c *fboClient) Send(r *Round, out Outbox) error {
	if r.Index%2 == 0 || !c.have {
		return nil
	}
	c.have = false
	st := c.stages.at(r.Index / 2)
	dy := len(c.y)
	m := c.model
	c.flip ^= 1
	up := c.out[c.flip][:0]
	kind := KindUpdate
	switch st.kind {
	case stLowerA:
		copy(c.y, c.in[:dy])
		c.idxA = batch(c.idxA, c.gb)
		m.InnerGrad(c.gy0, c.y, c.x, c.train, c.idxA) // kept for One-Round-Lower's correction
		up = append(up, c.gy0...)
		switch {
		case st.q < 0 || st.t < st.q:
		case st.t == st.q:
			c.gradFy(c.gy, c.fb.Next())
			up = append(up, c.gy...)
		default:
			zp := c.in[dy : 2*dy]
			m.InnerHVP(c.hv, c.y, c.x, c.train, c.gb.Next(), zp)
			floats.AddScaledTo(c.tmp, zp, -c.p.Lambda, c.hv)
			up = append(up, c.tmp...)
		}
	case stLowerB:
		q := c.in[:dy]
		copy(c.yv, c.y)
		for v := range c.p.LowerLocal {
			idx := c.idxA
			if v > 0 {
				idx = c.gb.Next()
			}
			m.InnerGrad(c.gy, c.yv, c.x, c.train, idx)
			if c.p.Lower == "svrg" {
				if v > 0 {
					m.InnerGrad(c.tmp, c.y, c.x, c.train, idx)
				} else {
					copy(c.tmp, c.gy0) // the same sample as ∇G_i(y_v) at v = 0
				}
				floats.Sub(c.gy, c.tmp)
				floats.Add(c.gy, q)
			}
			floats.AddScaled(c.yv, -c.p.Beta, c.gy)
		}
		up, kind = append(up, c.yv...), KindModel
	case stLowerLocal:
		copy(c.yv, c.in[:dy])
		for range c.p.LowerLocal {
			m.InnerGrad(c.gy, c.yv, c.x, c.train, c.gb.Next())
			floats.AddScaled(c.yv, -c.p.Beta, c.gy)
		}
		up, kind = append(up, c.yv...), KindModel
	case stP0:
		copy(c.y, c.in[:dy])
		c.gradFy(c.gy, c.fb.Next())
		up = append(up, c.gy...)
	case stNeumann:
		p := c.in[:dy]
		m.InnerHVP(c.hv, c.y, c.x, c.train, c.gb.Next(), p)
		floats.AddScaledTo(c.tmp, p, -c.p.Lambda, c.hv)
		up = append(up, c.tmp...)
	case stHyper:
		c.hyper(c.in[:dy])
		up = append(up, c.gx...)
	case stUpper:
		c.upper(c.in[:len(c.x)])
		up, kind = append(up, c.xv...), KindModel
	case stLocalUpper:
		copy(c.y, c.in[:dy])
		c.localP()
		c.hyper(c.local)
		c.upper(c.gx)
		up, kind = append(up, c.xv...), KindModel
	}
	if !AllFinite(up) {
		return fmt.Errorf("%w: client %d's %s upload (lower beta, alpha or lambda)", ErrNonFinite, c.id, stageName(st.kind))
	}
	c.out[c.flip] = up
	Send(out, []int{0}, Payload{Kind: kind, Vec: up})
	return nil
}

// gradFy writes ∇_yF_i(x, y) on the batch into dst.
func (c *fboClient) gradFy(dst []float64, idx []int) {
	var gx []float64
	if _, ok := c.model.(*models.HyperRep); !ok {
		gx = c.scratchX() // the other models want both parts
	}
	c.model.OuterGrad(dst, gx, c.y, c.x, c.val, idx)
}

// gradFx writes ∇_xF_i(x, y) on the batch into dst.
func (c *fboClient) gradFx(dst, x []float64, idx []int) {
	var gy []float64
	if _, ok := c.model.(*models.HyperRep); !ok {
		gy = c.tmpY
	}
	c.model.OuterGrad(gy, dst, c.y, x, c.val, idx)
}

func (c *fboClient) scratchX() []float64 {
	if c.tmpX == nil {
		c.tmpX = make([]float64, len(c.x))
	}
	return c.tmpX
}

// hyper writes h_i = ∇_xF_i(x, y) − ∇²_xyG_i(x, y)·p into c.gx.
func (c *fboClient) hyper(p []float64) {
	c.gradFx(c.gx, c.x, c.fb.Next())
	c.model.InnerCross(c.gx0, c.y, c.x, c.train, c.gb.Next(), p)
	floats.Sub(c.gx, c.gx0)
}

// localP writes LFedNest's local p_i = λ Σ_{n=0}^{T} (I − λ∇²_yyG_i)^n ∇_yF_i
// into c.local (no communication).
func (c *fboClient) localP() {
	lf := c.method.(*LFedNest)
	dy := len(c.y)
	if c.local == nil {
		c.local = make([]float64, dy)
	}
	cur := make([]float64, dy)
	c.gradFy(cur, c.fb.Next())
	copy(c.local, cur)
	for range lf.Neumann {
		c.model.InnerHVP(c.hv, c.y, c.x, c.train, c.gb.Next(), cur)
		floats.AddScaled(cur, -c.p.Lambda, c.hv)
		floats.Add(c.local, cur)
	}
	floats.Scale(c.p.Lambda, c.local)
}

// upper runs One-Round-Upper (Alg. 4) from c.x with the global estimate h
// and leaves x_τ in c.xv: h_{i,v} = h − ∇_xF_i(x, y; ξ) + ∇_xF_i(x_v, y; ξ'),
// with ξ' = ξ drawn afresh per step (FedNest, LFedNest; the correction
// vanishes at v = 0) or ξ drawn once and ξ' per step (FBO-AggITD, Sec. 3).
func (c *fboClient) upper(h []float64) {
	h = slices.Clone(h)
	copy(c.xv, c.x)
	var xi, xi2 []int
	if !c.sameBatch {
		xi = batch(nil, c.fb)
		c.gradFx(c.gx0, c.x, xi)
	}
	for v := range c.p.Tau {
		if c.sameBatch {
			if v == 0 {
				floats.AddScaled(c.xv, -c.p.Alpha, h)
				continue
			}
			xi2 = batch(xi2, c.fb)
			c.gradFx(c.gx0, c.x, xi2)
		} else {
			xi2 = batch(xi2, c.fb)
		}
		c.gradFx(c.gx, c.xv, xi2)
		floats.Sub(c.gx, c.gx0)
		floats.Add(c.gx, h)
		floats.AddScaled(c.xv, -c.p.Alpha, c.gx)
	}
}

// Checkpoints. A phase holds whole outer iterations, and every iteration
// starts with a round in which the server draws S and sends x (and y) to
// the clients of S, which take part only if they got it (Enter resets
// fboClient.active). So the server's global model, its aggregates (q and
// z are kept when no upload arrives) and its sampling stream outlive a
// phase, and S, though redrawn in the first round, is saved with them; a
// client's iterates, gradients and minibatch indices are set anew in every
// iteration it takes part in, and only its minibatch positions (and, for
// clarity, its x and y) are saved. Send buffers and accumulators are
// scratch: no message outlives its phase.

// fboProgramState is what fboProgram carries between phases.
type fboProgramState struct {
	Done int
	RNG  []byte // the scheduling stream (Q, T')
}

// SaveState implements Stateful.
func (p *fboProgram) SaveState() ([]byte, error) {
	r, err := p.r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return EncodeState(fboProgramState{Done: p.done, RNG: r})
}

// LoadState implements Stateful.
func (p *fboProgram) LoadState(b []byte) error {
	var st fboProgramState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	if k := p.m.params().OuterSteps; st.Done < 0 || st.Done > k {
		return fmt.Errorf("%s: a saved state after %d outer iterations for a run of %d", p.name, st.Done, k)
	}
	if err := p.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%s: scheduling stream: %w", p.name, err)
	}
	p.done = st.Done
	return nil
}

// fboServerState is what fboServer carries between phases. An aggregate
// not computed yet is nil.
type fboServerState struct {
	X, Y          []float64
	Q, Z, H       []float64
	Pcur, Psum    []float64
	RNG           []byte // the sampling stream
	Chosen        []int  // the last S
	Method, Lower string // checked on load
}

// SaveState implements Stateful.
func (s *fboServer) SaveState() ([]byte, error) {
	r, err := s.r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return EncodeState(fboServerState{X: s.x, Y: s.y, Q: s.q, Z: s.z, H: s.h, Pcur: s.pcur, Psum: s.psum,
		RNG: r, Chosen: s.chosen, Method: fmt.Sprintf("%T", s.method), Lower: s.p.Lower})
}

// LoadState implements Stateful.
func (s *fboServer) LoadState(b []byte) error {
	var st fboServerState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	if m := fmt.Sprintf("%T", s.method); st.Method != m || st.Lower != s.p.Lower {
		return fmt.Errorf("server: a saved state of %s (lower %q) for %s (lower %q)", st.Method, st.Lower, m, s.p.Lower)
	}
	dx, dy := len(s.x), len(s.y)
	if err := CheckLens("server", map[string][2]int{
		"x": {len(st.X), dx}, "y": {len(st.Y), dy},
		"q": {len(st.Q), dy}, "z": {len(st.Z), dy}, "h": {len(st.H), dx},
		"p": {len(st.Pcur), dy}, "Σp": {len(st.Psum), dy},
	}, map[string]bool{"q": st.Q == nil, "z": st.Z == nil, "h": st.H == nil, "p": st.Pcur == nil, "Σp": st.Psum == nil}); err != nil {
		return err
	}
	if len(st.Chosen) > s.sample {
		return fmt.Errorf("server: a saved sample of %d clients, the run samples %d", len(st.Chosen), s.sample)
	}
	for _, c := range st.Chosen {
		if c < 1 || c > s.m {
			return fmt.Errorf("server: a saved sample holds client %d, the run has clients 1 … %d", c, s.m)
		}
	}
	if err := s.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("server: sampling stream: %w", err)
	}
	copy(s.x, st.X)
	copy(s.y, st.Y)
	s.q, s.z, s.h, s.pcur, s.psum = st.Q, st.Z, st.H, st.Pcur, st.Psum
	s.chosen = st.Chosen
	s.stages = nil
	return nil
}

// fboClientState is what an fboClient carries between phases.
type fboClientState struct {
	ID         int
	X, Y       []float64
	Train, Val BatcherState // minibatch positions on G_i's and F_i's data
}

// SaveState implements Stateful.
func (c *fboClient) SaveState() ([]byte, error) {
	g, err := c.gb.save()
	if err != nil {
		return nil, err
	}
	f, err := c.fb.save()
	if err != nil {
		return nil, err
	}
	return EncodeState(fboClientState{ID: c.id, X: c.x, Y: c.y, Train: g, Val: f})
}

// LoadState implements Stateful.
func (c *fboClient) LoadState(b []byte) error {
	var st fboClientState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	who := fmt.Sprintf("client %d", c.id)
	if st.ID != c.id {
		return fmt.Errorf("%s: a saved state of client %d", who, st.ID)
	}
	if err := CheckLens(who, map[string][2]int{"x": {len(st.X), len(c.x)}, "y": {len(st.Y), len(c.y)}}, nil); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		st   BatcherState
	}{{"training", st.Train}, {"validation", st.Val}} {
		if !IsPerm(p.st.Perm) {
			return fmt.Errorf("%s: the saved %s minibatch order is not a permutation", who, p.name)
		}
	}
	prev, err := c.gb.save()
	if err != nil {
		return err
	}
	prev.Perm = slices.Clone(prev.Perm) // load copies into the same slice
	if err := c.gb.load(st.Train); err != nil {
		return fmt.Errorf("%s: training minibatches: %w", who, err)
	}
	if err := c.fb.load(st.Val); err != nil {
		_ = c.gb.load(prev) // leave the client as it was
		return fmt.Errorf("%s: validation minibatches: %w", who, err)
	}
	copy(c.x, st.X)
	copy(c.y, st.Y)
	c.stages, c.active, c.have = nil, -1, false
	return nil
}
