package fed

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fedavg",
		"Federated averaging with a server (McMahan et al.): node 0 is the server, the hub of a star; each communication round it samples participation·m clients from its own stream and sends them the global model, they take local_steps SGD steps on their training data and upload, and the server averages the uploads that arrived (a dropped upload is simply missing; with none the model stays). Two runtime rounds per communication round (down, up).",
		func() optim.Algorithm { return DefaultFedAvg() })
}

// FedAvg is federated averaging over a star whose hub is the server.
type FedAvg struct {
	optim.FederatedTraining `yaml:",inline"`
}

// DefaultFedAvg returns FedAvg with its default parameters.
func DefaultFedAvg() *FedAvg {
	return &FedAvg{optim.FederatedTraining{Rounds: 100, Participation: 0.1, LocalSteps: 1, LR: 0.1, Batch: 32, EvalEvery: 10}}
}

// Plan implements optim.Algorithm.
func (f *FedAvg) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return f.PlanWith(s, nil)
}

// PlanWith is Plan with a hook on every local step of every client (nil:
// plain SGD): node 0 is the server, the others clients; one phase of 2R
// runtime rounds.
func (f *FedAvg) PlanWith(s *optim.Setup, step LocalStep) (optim.ClientFactory, optim.Program, error) {
	return f.PlanSteps(s, step, nil)
}

// PlanSteps is Plan with a hook on every local step of every client (nil:
// plain SGD) and one on the server's step (nil: the mean of the uploads
// replaces the global model).
func (f *FedAvg) PlanSteps(s *optim.Setup, local LocalStep, server ServerStep) (optim.ClientFactory, optim.Program, error) {
	if server != nil { // a bad declaration is a planning error
		st := &ServerState{d: len(s.X0)}
		if server(st); st.err != nil {
			return nil, nil, st.err
		}
	}
	factory := func(i int) (optim.Client, error) {
		if i == 0 {
			return &optim.Fixed{Behaviour: &Server{Strategy: newMean(s, f, server)}}, nil
		}
		return &optim.Fixed{Behaviour: &Client{Trainer: NewSGD(s, i, f.LocalSteps, f.LR, f.Batch, local)}}, nil
	}
	return factory, TrainingPhases("fedavg", f.Rounds, f.EvalEvery), nil
}

// Mean is FedAvg's strategy: it samples clients, sends them the global
// model X and replaces X by the plain mean of the uploads that arrived
// (with none, X stays), or, with a server step, moves X by the step on
// the mean update. It evaluates X on the pooled test data.
type Mean struct {
	Sampled
	Model models.Bilevel[float64]
	Test  *datasets.Dataset
	// The server step, its declared state and the pseudo-gradient
	// (scratch); nil without one.
	step  StepFunc
	state *ServerState
	delta []float64
}

// newMean returns the strategy of f's server, with the server step when
// it is not nil.
func newMean(s *optim.Setup, f *FedAvg, server ServerStep) *Mean {
	g := &Mean{Sampled: Sampled{X: slices.Clone(s.X0), Sampler: NewSampler(s.Seed, s.Net.N-1, f.Participation)},
		Model: s.Model.Clone(), Test: s.Test}
	if server != nil {
		g.state = &ServerState{d: len(s.X0)}
		g.step = server(g.state)
		g.delta = make([]float64, len(s.X0))
	}
	return g
}

// Aggregate implements Strategy.
func (g *Mean) Aggregate(_ *optim.Round, ups []optim.Message) error {
	dst := g.X
	if g.step != nil {
		if len(ups) == 0 {
			return nil
		}
		dst = g.delta
	}
	for n, m := range ups {
		if n == 0 {
			copy(dst, m.Vec)
		} else {
			floats.Add(dst, m.Vec)
		}
	}
	if len(ups) > 0 {
		floats.Scale(1/float64(len(ups)), dst)
	}
	if g.step != nil {
		floats.Sub(dst, g.X)
		g.step(g.X, dst)
	}
	if !optim.AllFinite(g.X) {
		return optim.ErrNonFinite
	}
	return nil
}

// Observe implements optim.Observer: the global model on the pooled test
// data.
func (g *Mean) Observe() optim.Stats {
	return ServerStats(g.Model, g.X, datasets.ClientData{Test: g.Test})
}

// meanState is what a Mean carries across rounds: the global model, the
// sampler's position and what the server step declared.
type meanState struct {
	Kind    string // "fedavg-server", checked on load
	Sampled SampledState
	Step    []NamedVec
}

// SaveState implements optim.Stateful.
func (g *Mean) SaveState() ([]byte, error) {
	sp, err := g.Sampled.Save()
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(meanState{Kind: "fedavg-server", Sampled: sp, Step: g.state.save()})
}

// LoadState implements optim.Stateful.
func (g *Mean) LoadState(b []byte) error {
	var st meanState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	const who = "fedavg server"
	if st.Kind != "fedavg-server" {
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	}
	if err := g.state.check(who, st.Step); err != nil {
		return err
	}
	if err := g.Sampled.Load(who, st.Sampled); err != nil {
		return err
	}
	g.state.load(st.Step)
	return nil
}

// LocalStep is a hook on a local step: it may change the gradient g of the
// local loss at the client's model x, given the global model the client
// started the round from (FedProx adds μ(x − global)).
type LocalStep func(g, x, global []float64)

// SGD is FedAvg's trainer: from the global model it takes steps SGD steps
// of size lr on minibatches of the client's training data, calling its
// hook on each, and uploads the result.
type SGD struct {
	id              int
	model           models.Bilevel[float64]
	data            *datasets.Dataset
	steps           int
	lr              float64
	hook            LocalStep
	x, global, grad []float64
	batch           *optim.Batcher
}

// NewSGD returns client i's trainer (batch 0: the full batch; step nil: no
// hook).
func NewSGD(s *optim.Setup, i, steps int, lr float64, batch int, step LocalStep) *SGD {
	d := len(s.X0)
	return &SGD{id: i, model: s.Model.Clone(), data: s.Data[i].Train, steps: steps, lr: lr, hook: step,
		x: make([]float64, d), global: make([]float64, d), grad: make([]float64, d),
		batch: optim.NewBatcher(s.Data[i].Train.N, batch, rng.NewStream(s.Seed, i, rng.PurposeBatch))}
}

// Start implements Trainer.
func (c *SGD) Start(global []float64) error {
	copy(c.x, global)
	copy(c.global, global)
	return nil
}

// Train implements Trainer.
func (c *SGD) Train() ([]float64, error) {
	for range c.steps {
		loss := c.model.InnerGrad(c.grad, c.x, nil, c.data, c.batch.Next())
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return nil, fmt.Errorf("%w: the local training loss is %v (lower lr)", optim.ErrNonFinite, loss)
		}
		if c.hook != nil {
			c.hook(c.grad, c.x, c.global)
		}
		floats.AddScaled(c.x, -c.lr, c.grad)
	}
	return c.x, nil
}

// sgdState is what an SGD trainer carries across rounds: its model
// (received but not yet trained on, when a cut falls between the down and
// the up round), the global model it started from, and its minibatch
// position. The gradient is scratch.
type sgdState struct {
	Kind      string // "fedavg-client", checked on load
	ID        int
	X, Global []float64
	Batch     optim.BatcherState
}

// SaveState implements optim.Stateful.
func (c *SGD) SaveState() ([]byte, error) {
	bs, err := c.batch.Save()
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(sgdState{Kind: "fedavg-client", ID: c.id, X: c.x, Global: c.global, Batch: bs})
}

// LoadState implements optim.Stateful.
func (c *SGD) LoadState(b []byte) error {
	var st sgdState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	who := fmt.Sprintf("fedavg client %d", c.id)
	if st.Kind != "fedavg-client" {
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	}
	if st.ID != c.id {
		return fmt.Errorf("%s: a saved state of client %d", who, st.ID)
	}
	if err := optim.CheckLens(who, map[string][2]int{"x": {len(st.X), len(c.x)}, "global model": {len(st.Global), len(c.global)}}, nil); err != nil {
		return err
	}
	if !optim.IsPerm(st.Batch.Perm) {
		return fmt.Errorf("%s: the saved minibatch order is not a permutation", who)
	}
	if err := c.batch.Load(st.Batch); err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	copy(c.x, st.X)
	copy(c.global, st.Global)
	return nil
}
