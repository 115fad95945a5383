package fed

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fedavg-oracle",
		"FedAvg-Oracle, the upper baseline of Comm-FedBiO: federated averaging in which every client knows which of its labels are clean and trains on those samples only (λ_j = 1 for a clean sample, 0 for a corrupted one). Same loop and parameters as comm-fedbio without the hyper-gradient; needs data kind noisy-labels.",
		func() optim.Algorithm { return &FedAvgOracle{FedBioTraining: optim.DefaultFedBioTraining()} })
}

// FedAvgOracle is FedAvg on the clean samples only, with Comm-FedBiO's
// loop: the server averages the uploads weighted by the clients' data
// sizes (Comm-FedBiO's Alg. 1, line 10) and evaluates on its validation
// and test sets.
type FedAvgOracle struct {
	optim.FedBioTraining `yaml:",inline"`
}

// Server implements optim.Algorithm.
func (*FedAvgOracle) Server() bool { return true }

// Plan implements optim.Algorithm.
func (a *FedAvgOracle) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
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
	}
	factory := func(i int) (optim.Client, error) {
		if i == 0 {
			return &optim.Fixed{Behaviour: &Server{Strategy: &SizeWeighted{Sampled: Sampled{X: slices.Clone(s.X0),
				Sampler: NewSampler(s.Seed, m, a.Participation)}, Sizes: sizes, Loss: loss.Clone(), Val: s.Data[0].Val,
				Test: s.Test, acc: make([]float64, len(s.X0))}}}, nil
		}
		return &optim.Fixed{Behaviour: &Client{Trainer: newCleanSGD(a, s, loss.Clone(), i), Policy: ThisRound}}, nil
	}
	// Comm-FedBiO's phase name, which its experiment's sink selects.
	return factory, TrainingPhases("comm-fedbio", a.Rounds, a.EvalEvery), nil
}

// SizeWeighted is a strategy that samples clients, sends them X and moves
// X by the data-size-weighted mean of their updates,
// X ← X + Σ N_m (y_m − X) / Σ N_m over the uploads that arrived. It
// counts what it received and evaluates X on its validation and test sets
// with a sample-weighted loss.
type SizeWeighted struct {
	Sampled
	Sizes []float64 // by node
	Loss  *models.SampleWeighted
	Val   *models.Dataset
	Test  *models.Dataset
	acc   []float64
	// The uploads delivered so far.
	upBytes, upMsgs int64
}

// Aggregate implements Strategy.
func (g *SizeWeighted) Aggregate(_ *optim.Round, ups []optim.Message) error {
	var total float64
	clear(g.acc)
	for _, m := range ups {
		g.upBytes += int64(8 * (len(m.Vec) + 1))
		g.upMsgs++
		if len(m.Vec) != len(g.X) {
			continue
		}
		w := g.Sizes[m.From]
		total += w
		for k, v := range m.Vec {
			g.acc[k] += w * (v - g.X[k])
		}
	}
	if total > 0 {
		floats.AddScaled(g.X, 1/total, g.acc)
	}
	if !optim.AllFinite(g.X) {
		return optim.ErrNonFinite
	}
	return nil
}

// Observe implements optim.Observer: the global model on the server's
// test and validation sets.
func (g *SizeWeighted) Observe() optim.Stats {
	st := optim.Stats{X: g.X, ValN: g.Val.N, ValLoss: g.Loss.Loss(g.X, nil, g.Val, nil), ValAcc: g.Loss.Accuracy(g.X, g.Val, nil)}
	if t := g.Test; t != nil && t.N > 0 {
		st.TestN, st.TestLoss, st.TestAcc = t.N, g.Loss.Loss(g.X, nil, t, nil), g.Loss.Accuracy(g.X, t, nil)
	}
	return st
}

// Result implements optim.Resulter: what the server received, measured,
// in Comm-FedBiO's terms (no hyper-gradient uploads).
func (g *SizeWeighted) Result() optim.Result {
	return optim.Result{Values: map[string]float64{
		"upload_bytes": float64(g.upBytes), "upload_messages": float64(g.upMsgs),
		"hyper_upload_bytes": 0, "hyper_upload_messages": 0, "hyper_message_floats": 0,
	}, Vectors: map[string][]float64{"x": g.X}}
}

// sizeWeightedState is what a SizeWeighted carries across rounds.
type sizeWeightedState struct {
	Kind            string // "size-weighted-server", checked on load
	Sampled         SampledState
	UpBytes, UpMsgs int64
}

// SaveState implements optim.Stateful.
func (g *SizeWeighted) SaveState() ([]byte, error) {
	sp, err := g.Sampled.Save()
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(sizeWeightedState{Kind: "size-weighted-server", Sampled: sp, UpBytes: g.upBytes, UpMsgs: g.upMsgs})
}

// LoadState implements optim.Stateful.
func (g *SizeWeighted) LoadState(b []byte) error {
	var st sizeWeightedState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	const who = "size-weighted server"
	switch {
	case st.Kind != "size-weighted-server":
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	case st.UpBytes < 0 || st.UpMsgs < 0:
		return fmt.Errorf("%s: negative saved upload counts", who)
	}
	if err := g.Sampled.Load(who, st.Sampled); err != nil {
		return err
	}
	g.upBytes, g.upMsgs = st.UpBytes, st.UpMsgs
	return nil
}

// cleanSGD is an oracle client: local SGD steps on the λ-weighted loss
// over the rows whose label is clean (λ_j = 1; the others have λ_j = 0).
type cleanSGD struct {
	id           int
	steps        int
	lr           float64
	loss         *models.SampleWeighted
	data         *models.Dataset
	noisy        []bool
	lambda       []float64
	active, rows []int
	batch        *optim.Batcher
	x, g         []float64
}

func newCleanSGD(a *FedAvgOracle, s *optim.Setup, loss *models.SampleWeighted, i int) *cleanSGD {
	data, d := s.Data[i].Train, loss.Dim()
	c := &cleanSGD{id: i, steps: a.LocalSteps, lr: a.LR, loss: loss, data: data, noisy: s.Data[i].Noisy,
		lambda: make([]float64, data.N), x: make([]float64, d), g: make([]float64, d)}
	if c.noisy == nil {
		c.noisy = make([]bool, data.N)
	}
	for j := range c.lambda {
		if !c.noisy[j] {
			c.lambda[j] = 1
			c.active = append(c.active, j)
		}
	}
	c.batch = optim.NewBatcher(max(1, len(c.active)), a.Batch, rng.NewStream(s.Seed, i, rng.PurposeBatch))
	return c
}

// Start implements Trainer.
func (c *cleanSGD) Start(global []float64) error {
	copy(c.x, global)
	return nil
}

// Train implements Trainer.
func (c *cleanSGD) Train() ([]float64, error) {
	if len(c.active) == 0 {
		return c.x, nil
	}
	for range c.steps {
		rows := c.active
		if idx := c.batch.Next(); idx != nil {
			c.rows = c.rows[:0]
			for _, q := range idx {
				c.rows = append(c.rows, c.active[q])
			}
			rows = c.rows
		}
		loss := c.loss.Grad(c.g, c.x, c.lambda, c.data, rows)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return nil, fmt.Errorf("%w: the local training loss is %v (lower lr)", optim.ErrNonFinite, loss)
		}
		floats.AddScaled(c.x, -c.lr, c.g)
	}
	return c.x, nil
}

// Result implements optim.Resulter: the client's λ and its mislabel
// detection counts, which the oracle gets right by construction.
func (c *cleanSGD) Result() optim.Result {
	var tp float64
	for j := range c.lambda {
		if c.noisy[j] {
			tp++
		}
	}
	return optim.Result{Values: map[string]float64{"tp": tp, "fp": 0, "fn": 0, "n": float64(len(c.lambda))},
		Vectors: map[string][]float64{"weights": c.lambda}}
}

// cleanSGDState is what an oracle client carries across rounds: its
// model and its minibatch position (λ follows from the data).
type cleanSGDState struct {
	Kind  string // "fedavg-oracle-client", checked on load
	ID    int
	X     []float64
	Batch optim.BatcherState
}

// SaveState implements optim.Stateful.
func (c *cleanSGD) SaveState() ([]byte, error) {
	bs, err := c.batch.Save()
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(cleanSGDState{Kind: "fedavg-oracle-client", ID: c.id, X: c.x, Batch: bs})
}

// LoadState implements optim.Stateful.
func (c *cleanSGD) LoadState(b []byte) error {
	var st cleanSGDState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	who := fmt.Sprintf("fedavg-oracle client %d", c.id)
	switch {
	case st.Kind != "fedavg-oracle-client":
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	case st.ID != c.id:
		return fmt.Errorf("%s: a saved state of client %d", who, st.ID)
	case !optim.IsPerm(st.Batch.Perm):
		return fmt.Errorf("%s: the saved minibatch order is not a permutation", who)
	}
	if err := optim.CheckLens(who, map[string][2]int{"x": {len(st.X), len(c.x)}}, nil); err != nil {
		return err
	}
	if err := c.batch.Load(st.Batch); err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	copy(c.x, st.X)
	return nil
}
