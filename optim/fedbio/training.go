package fedbio

import (
	"fmt"

	"hgpsim/models"
	"hgpsim/optim"
)

func defaultTraining() optim.FederatedTraining {
	return optim.FederatedTraining{Rounds: 100, Participation: 1, LocalSteps: 5, LR: 0.01, Batch: 256, EvalEvery: 5}
}

// lambdaMode says how a client's λ is set.
type lambdaMode int

const (
	lambdaLearned lambdaMode = iota // Comm-FedBiO: λ = 1, then hyper-gradient steps
	lambdaOracle                    // λ_j = [label j is clean]
	lambdaFilter                    // Preprocess: λ_j = [p_bench(y_j | s_j) >= threshold]
)

// plan is what an algorithm of the family asks of the shared
// machinery.
type plan struct {
	train optim.FederatedTraining
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

// period returns P, the runtime rounds of one outer iteration: an even
// number, so that a slot is a down or up half as its round is.
func (p *plan) period() int {
	if p.hyper == nil {
		return 2
	}
	return 4 + 2*p.hyper.exchanges()
}

// build returns the client factory and program of a plan.
func (p *plan) build(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	c, ok := models.ClassifierOf(s.Model)
	if !ok {
		return nil, nil, fmt.Errorf("needs a plain classifier model (softmax, logistic or mlp without a head)")
	}
	loss := models.NewSampleWeighted[float64](c)
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
	sample := optim.SampleSize(p.train.Participation, m)
	factory := func(i int) (optim.Client, error) {
		if i == 0 {
			return &optim.Fixed{Behaviour: newServer(p, s, loss.Clone(), m, sample, sizes)}, nil
		}
		c, err := newClient(p, s, loss.Clone(), i)
		if err != nil {
			return nil, err
		}
		return &optim.Fixed{Behaviour: c}, nil
	}
	per := p.period()
	eval := 0
	if p.train.EvalEvery > 0 {
		eval = per * p.train.EvalEvery
	}
	var phases optim.Phases
	if p.mode == lambdaFilter {
		phases = append(phases, optim.PhaseSpec{Name: "preprocess", Rounds: 2, Tick: optim.Continue})
	}
	// One training phase, cut at its evaluations so that the run can be
	// checkpointed between them.
	phases = append(phases, optim.SplitPhase(optim.PhaseSpec{Name: "comm-fedbio", Rounds: per * p.train.Rounds, EvalEvery: eval, Tick: optim.Continue}, 1)...)
	return factory, &phases, nil
}

// messageBytes64 is what a message of n floats costs on the wire (the
// runtime's rule: 8 bytes per float and 8 for the header).
func messageBytes64(n int) int64 { return int64(8 * (n + 1)) }
