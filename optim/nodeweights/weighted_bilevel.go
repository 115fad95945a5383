package nodeweights

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fed"
)

func init() {
	optim.Algorithms.Register("weighted-nodes",
		"Federated learning on adaptively weighted nodes (weighted-nodes paper Alg. 2/3): node 0, the center, holds D^valid and learns the node weights w on the capped simplex Δ_K^b. Per outer iteration Local-SVRG (Alg. 1: loopless SVRG, tau local steps between weighted averagings at the center) solves θ(w) = argmin Σ w_k L̂_k, then the h-problem (Σ w_k ∇²L̂_k) h = ∇L̂₀(θ) from h⁰ = ∇L̂₀(θ); the nodes upload ∇L̂_k(θ), the center forms ∇_k F = −∇L̂_k(θ)ᵀh and takes a projected gradient step (method: projected, Alg. 3) or the accelerated ABA step with w_md and w_ag (method: aba, Alg. 2). 4n + 1 runtime rounds per outer iteration (n averagings per solve, two rounds each, and the upload).",
		func() optim.Algorithm {
			return &WeightedNodes{WeightedCommon: fed.DefaultWeightedCommon(), SVRGParam: SVRGParam{Q: 0.02},
				HLR: 0.0005, Eta: 0.02, Cap: 1.0 / 3, Method: "projected", Output: "last"}
		})
}

// WeightedNodes is the bilevel method of the weighted-nodes paper.
type WeightedNodes struct {
	fed.WeightedCommon `yaml:",inline"`
	SVRGParam          `yaml:",inline"`
	HLR                float64 `yaml:"h_lr" doc:"local step of the h-problem (15) (the paper: 5e-4, 2e-4 or 1e-4), finite, > 0"`
	Eta                float64 `yaml:"eta" doc:"outer step η on the weights (the paper: 0.025, 0.02 or 0.015), finite, > 0"`
	Cap                float64 `yaml:"cap" doc:"cap b of the capped simplex Δ_K^b, in [1/K, 1] (the paper: 1/3)"`
	Method             string  `yaml:"method" doc:"projected (Alg. 3, the paper's experiments) or aba (Alg. 2, accelerated)"`
	Output             string  `yaml:"output" doc:"what a Local-SVRG solve returns: last (the last averaged iterate x^(T); empty means last) or average (Alg. 1 line 15: Σ_t u_t x^(t) / Σ_t u_t over the steps t = 0 … T of the weighted average of the nodes' iterates, u_t = (1 − min{γμ, q/4})^−(t+1); one more upload per node and solve)"`
	Mu                 float64 `yaml:"mu" doc:"strong-convexity modulus μ in the weights u_t of output: average (the l2 rate bounds it below for softmax regression); 0 weighs every iterate alike, finite, >= 0"`
}

// Validate implements Algorithm.
func (a *WeightedNodes) Validate(n int) error {
	if err := a.Check(n); err != nil {
		return err
	}
	if err := a.SVRGParam.validate(); err != nil {
		return err
	}
	if err := fed.PositiveFinite("h_lr", a.HLR); err != nil {
		return err
	}
	if err := fed.PositiveFinite("eta", a.Eta); err != nil {
		return err
	}
	if a.Method != "projected" && a.Method != "aba" {
		return fmt.Errorf("method must be projected or aba, got %q", a.Method)
	}
	if a.Output != "" && a.Output != "last" && a.Output != "average" { // "" is last, the zero value
		return fmt.Errorf("output must be last or average, got %q", a.Output)
	}
	if !(a.Mu >= 0) || math.IsInf(a.Mu, 0) {
		return fmt.Errorf("mu must be a finite number >= 0, got %v", a.Mu)
	}
	if k := n - 1; !(a.Cap <= 1) || float64(k)*a.Cap < 1-1e-12 {
		return fmt.Errorf("cap must be in [1/K, 1] = [1/%d, 1], got %v", k, a.Cap)
	}
	return nil
}

// Plan implements Algorithm.
func (a *WeightedNodes) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	ntrain, err := fed.MinTrain(s)
	if err != nil {
		return nil, nil, err
	}
	k, n := s.Net.N-1, a.Averagings(ntrain)
	factory := func(i int) (optim.Client, error) {
		if i == 0 {
			c := &wnCenter{a: a, k: k, n: n, model: s.Model.Clone(), data: s.Data[0],
				theta: slices.Clone(s.X0), hbar: make([]float64, len(s.X0)), g0: make([]float64, len(s.X0)),
				w: make([]float64, k), use: make([]float64, k), hyper: make([]float64, k)}
			for j := range c.w {
				c.w[j] = 1 / float64(k)
			}
			c.wAg = slices.Clone(c.w)
			if a.Output == "average" {
				c.sum, c.tmp = make([]float64, len(s.X0)), make([]float64, len(s.X0))
			}
			return &stepClient{c}, nil
		}
		model, data := s.Model.Clone(), s.Data[i].Train
		batch, coin := nodeStreams(s.Seed, i, data.N, a.Batch)
		dim := len(s.X0)
		nd := &wnNode{a: a, n: n, theta: slices.Clone(s.X0), g0: make([]float64, dim), gk: make([]float64, dim),
			loss:  &lossSum{model: model, data: data, tmp: make([]float64, dim)},
			hvp:   &hvpSum{model: model, data: data, theta: make([]float64, dim), g0: make([]float64, dim), tmp: make([]float64, dim)},
			model: model, data: data}
		nd.sv = newSVRG(dim, a.LR, a.Q, batch, coin)
		if a.Output == "average" {
			nd.sv.acc = make([]float64, dim)
		}
		return &stepClient{nd}, nil
	}
	return factory, fed.OuterPhases("weighted-nodes", a.Outer, 4*n+1), nil
}

// wnCenter is node 0: it averages, computes ∇L̂₀ and updates the weights.
type wnCenter struct {
	a                  *WeightedNodes
	k, n, step, syncs  int
	model              models.Bilevel[float64]
	data               datasets.ClientData
	theta, hbar, g0    []float64
	w, wAg, use, hyper []float64
	missing            int // hyper-gradient uploads lost so far
	nodes              []int
	sendX, sendG       optim.SendBuffers // models (θ, h) and ∇L̂₀(θ)
	// sum is the center's part of a solve's output with output: average,
	// Σ v_t x̄^(t) over the averagings t = 0, τ, …, T; tmp the nodes' part.
	sum, tmp []float64
}

// weights returns the output weights of the θ-solve (or the h-solve).
func (a *WeightedNodes) weights(n int, h bool) outputWt {
	lr := a.LR
	if h {
		lr = a.HLR
	}
	return outputWt{rho: min(lr*a.Mu, a.Q/4), T: n * a.Tau}
}

func (c *wnCenter) enter(step int) {
	c.step = step
	if c.a.Method == "aba" {
		// w_md = 2/(s+2) w + s/(s+2) w_ag (Alg. 2, line 4).
		s := float64(step)
		for j := range c.use {
			c.use[j] = 2/(s+2)*c.w[j] + s/(s+2)*c.wAg[j]
		}
		return
	}
	copy(c.use, c.w)
}

func (c *wnCenter) Send(r *optim.Round, out optim.Outbox) error {
	i, n := r.Index, c.n
	if i >= 4*n || i%2 == 0 {
		return nil
	}
	if c.nodes == nil {
		c.nodes = fed.Everyone(c.k)
	}
	if i < 2*n {
		optim.Send(out, c.nodes, optim.Payload{Kind: optim.KindModel, Vec: c.sendX.Fill(c.theta)})
		if i == 2*n-1 {
			c.model.InnerGrad(c.g0, c.theta, nil, c.data.Val, nil)
			copy(c.hbar, c.g0) // the h-problem starts at ∇L̂₀(θ)
			optim.Send(out, c.nodes, optim.Payload{Kind: optim.KindUpdate, Vec: c.sendG.Fill(c.g0)})
		}
		return nil
	}
	optim.Send(out, c.nodes, optim.Payload{Kind: optim.KindModel, Vec: c.sendX.Fill(c.hbar)})
	return nil
}

func (c *wnCenter) Receive(r *optim.Round, in []optim.Message) error {
	i, n := r.Index, c.n
	if i%2 == 1 {
		return nil
	}
	c.syncs++
	switch {
	case i < 2*n:
		return c.average(c.theta, i, in, false)
	case i < 4*n:
		return c.average(c.hbar, i-2*n, in, true)
	}
	// ∇_k F = −∇L̂_k(θ)ᵀ h (eq. 14); a lost upload gives 0.
	clear(c.hyper)
	got := 0
	for _, m := range in {
		if m.From >= 1 && m.From <= c.k && m.Kind == optim.KindUpdate {
			c.hyper[m.From-1] = -floats.Dot(m.Vec, c.hbar)
			got++
		}
	}
	c.missing += c.k - got
	if !optim.AllFinite(c.hyper) {
		return fmt.Errorf("%w: the hyper-gradient of the weights", optim.ErrNonFinite)
	}
	return c.update()
}

// average is the j-th up round of a solve (j even) on x, the θ- or
// h-iterate: the weighted average of the uploads, and with output:
// average after the last one Alg. 1's output (line 15) in its place: the
// center's sum over the averaged iterates plus the weighted average of
// the nodes' sums over the steps between them, over Σ_t v_t. Without the
// nodes' sums (all lost) it is the average over the averaged iterates.
func (c *wnCenter) average(x []float64, j int, in []optim.Message, h bool) error {
	if c.sum == nil {
		_, err := fed.WeightedAverage(x, c.use, in, optim.KindModel)
		return err
	}
	wt := c.a.weights(c.n, h)
	if j == 0 {
		clear(c.sum)
		floats.AddScaled(c.sum, wt.at(0), x) // x^(0), where the solve started
	}
	if _, err := fed.WeightedAverage(x, c.use, in, optim.KindModel); err != nil {
		return err
	}
	floats.AddScaled(c.sum, wt.at((j/2+1)*c.a.Tau), x)
	if j != 2*c.n-2 {
		return nil
	}
	got, err := fed.WeightedAverage(c.tmp, c.use, in, optim.KindUpdate)
	if err != nil {
		return err
	}
	total := wt.sum()
	if got {
		floats.Add(c.sum, c.tmp)
	} else {
		total = 0
		for m := range c.n + 1 {
			total += wt.at(m * c.a.Tau)
		}
	}
	floats.ScaleTo(x, 1/total, c.sum)
	return nil
}

// update is line 11 of Alg. 3, or lines 13–14 of Alg. 2.
func (c *wnCenter) update() error {
	eta, tmp := c.a.Eta, make([]float64, c.k)
	if c.a.Method == "aba" {
		// argmin ⟨g, w⟩ + 2/(η(s+1))‖w − w^(s)‖² = Proj(w^(s) − η(s+1)/4 · g).
		floats.AddScaledTo(tmp, c.w, -eta*float64(c.step+1)/4, c.hyper)
		if err := optim.ProjectCappedSimplex(c.w, tmp, c.a.Cap); err != nil {
			return err
		}
		floats.AddScaledTo(tmp, c.use, -eta, c.hyper)
		return optim.ProjectCappedSimplex(c.wAg, tmp, c.a.Cap)
	}
	floats.AddScaledTo(tmp, c.w, -eta, c.hyper)
	return optim.ProjectCappedSimplex(c.w, tmp, c.a.Cap)
}

// Observe implements Observer: θ^(s) on D^valid and D^test.
func (c *wnCenter) Observe() optim.Stats { return fed.ServerStats(c.model, c.theta, c.data) }

// CenterResult is what the center of weighted-nodes reports at the end
// of an outer step. Its field 1 is fed.AveragingResult's, so the results
// of the baselines' centers (local-svrg, local-train) read as a
// CenterResult too, with only Syncs set.
type CenterResult struct {
	Syncs int `wire:"1"` // the averagings so far
	// W is the weights after the step (w_ag for ABA, the iterate Alg. 2
	// returns), WUsed those the step's solves used.
	W             []float64 `wire:"2"`
	WUsed         []float64 `wire:"3"`
	Hypergradient []float64 `wire:"4"`
	LostUploads   int       `wire:"5"`
}

// Result implements Resulter: the center's CenterResult.
func (c *wnCenter) Result() optim.Result {
	w := c.w
	if c.a.Method == "aba" {
		w = c.wAg
	}
	return optim.PutResult(CenterResult{Syncs: c.syncs, W: w, WUsed: c.use, Hypergradient: c.hyper, LostUploads: c.missing})
}

// wnNode is node k ≥ 1: Local-SVRG on the θ- and h-problems, then its
// gradient upload.
type wnNode struct {
	a             *WeightedNodes
	n             int
	sv            *svrg
	loss          *lossSum
	hvp           *hvpSum
	model         models.Bilevel[float64]
	data          *datasets.Dataset
	theta, g0, gk []float64
	center        [1]int
	sendX, sendG  optim.SendBuffers // models and the gradient upload
}

func (*wnNode) enter(int) {}

func (nd *wnNode) Send(r *optim.Round, out optim.Outbox) error {
	i, n := r.Index, nd.n
	if i%2 == 1 {
		return nil
	}
	switch {
	case i == 0:
		nd.sv.lr, nd.sv.weight = nd.a.LR, nd.a.weights(n, false)
		nd.sv.reset(nd.loss, nd.theta)
	case i == 2*n:
		copy(nd.hvp.theta, nd.theta)
		copy(nd.hvp.g0, nd.g0)
		nd.sv.lr, nd.sv.weight = nd.a.HLR, nd.a.weights(n, true)
		nd.sv.reset(nd.hvp, nd.g0)
	case i == 4*n:
		nd.model.InnerGrad(nd.gk, nd.theta, nil, nd.data, nil)
		optim.Send(out, nd.center[:], optim.Payload{Kind: optim.KindUpdate, Vec: nd.sendG.Fill(nd.gk)})
		return nil
	}
	if err := nd.sv.steps(nd.a.Tau); err != nil {
		return err
	}
	optim.Send(out, nd.center[:], optim.Payload{Kind: optim.KindModel, Vec: nd.sendX.Fill(nd.sv.x)})
	if nd.sv.acc != nil && (i == 2*n-2 || i == 4*n-2) {
		// The node's part of the solve's output (Alg. 1, line 15).
		optim.Send(out, nd.center[:], optim.Payload{Kind: optim.KindUpdate, Vec: nd.sendG.Fill(nd.sv.acc)})
	}
	return nil
}

func (nd *wnNode) Receive(r *optim.Round, in []optim.Message) error {
	i, n := r.Index, nd.n
	if i%2 == 0 || i >= 4*n {
		return nil
	}
	if v := fed.FromServer(in, optim.KindModel); v != nil {
		copy(nd.sv.x, v) // x_k = x̄ (Alg. 1, line 9); a lost message leaves the local iterate
	}
	if i == 2*n-1 {
		copy(nd.theta, nd.sv.x)
		if g := fed.FromServer(in, optim.KindUpdate); g != nil {
			copy(nd.g0, g)
		}
	}
	return nil
}

// wnCenterState is what the center carries across outer steps: θ, the
// h-iterate and ∇L̂₀(θ), the weights (w, w_ag, those the last step used)
// and the last hyper-gradient, and its counters. use is recomputed when a
// phase starts and hbar and g0 within it; they are kept all the same, so
// that a phase in which the center lost rounds resumes alike.
type wnCenterState struct {
	Step, Syncs, Missing int
	Theta, HBar, G0      []float64
	W, WAg, Use, Hyper   []float64
}

// SaveState implements Stateful.
func (c *wnCenter) SaveState() ([]byte, error) {
	return optim.EncodeState(wnCenterState{Step: c.step, Syncs: c.syncs, Missing: c.missing,
		Theta: c.theta, HBar: c.hbar, G0: c.g0, W: c.w, WAg: c.wAg, Use: c.use, Hyper: c.hyper})
}

// LoadState implements Stateful.
func (c *wnCenter) LoadState(b []byte) error {
	var st wnCenterState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	if st.Step < 0 || st.Syncs < 0 || st.Missing < 0 {
		return fmt.Errorf("weighted-nodes: a saved center with negative counters (step %d, syncs %d, lost %d)", st.Step, st.Syncs, st.Missing)
	}
	err := loadVecs(vecSlot{"θ", st.Theta, c.theta}, vecSlot{"h", st.HBar, c.hbar}, vecSlot{"∇L̂₀(θ)", st.G0, c.g0},
		vecSlot{"w", st.W, c.w}, vecSlot{"w_ag", st.WAg, c.wAg}, vecSlot{"w_used", st.Use, c.use},
		vecSlot{"hyper-gradient", st.Hyper, c.hyper})
	if err != nil {
		return fmt.Errorf("weighted-nodes center: %w", err)
	}
	c.step, c.syncs, c.missing = st.Step, st.Syncs, st.Missing
	return nil
}

// wnNodeState is what a node carries across outer steps: its θ and
// ∇L̂₀(θ) (the starting points of its next solves), the h-problem's θ and
// g₀, and its Local-SVRG state (iterate, reference, full gradient, step,
// problem, streams). gk is refilled before every upload.
type wnNodeState struct {
	Theta, G0, HTheta, HG0 []float64
	SVRG                   svrgState
}

// SaveState implements Stateful.
func (nd *wnNode) SaveState() ([]byte, error) {
	sv, err := nd.sv.save(nd.loss, nd.hvp)
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(wnNodeState{Theta: nd.theta, G0: nd.g0, HTheta: nd.hvp.theta, HG0: nd.hvp.g0, SVRG: sv})
}

// LoadState implements Stateful.
func (nd *wnNode) LoadState(b []byte) error {
	var st wnNodeState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	slots := []vecSlot{{"θ", st.Theta, nd.theta}, {"∇L̂₀(θ)", st.G0, nd.g0},
		{"h-problem θ", st.HTheta, nd.hvp.theta}, {"h-problem g₀", st.HG0, nd.hvp.g0}}
	for _, v := range slots {
		if err := sameLen(v.name, v.saved, v.dst); err != nil {
			return fmt.Errorf("weighted-nodes node: %w", err)
		}
	}
	if err := nd.sv.load(st.SVRG, nd.loss, nd.hvp); err != nil {
		return fmt.Errorf("weighted-nodes node: %w", err)
	}
	return loadVecs(slots...)
}
