package optim

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
)

func init() {
	Algorithms.Register("ditto",
		"Ditto (Li et al. 2021, Alg. 2) as the weighted-nodes paper runs it: every node takes part in each round (S_t = all), takes tau local SGD steps on the global model from the center and uploads; the center averages (w_k = 1/K) and personalizes for its target: each round personal_steps steps v ← v − lr(∇L̂₀(v) + λ(v − w)) on minibatches of D^valid. The center's personal model v is evaluated. Two runtime rounds per averaging.",
		func() Algorithm {
			return &Ditto{WeightedCommon: defaultWeightedCommon(), Lambda: 0.1, PersonalSteps: 25}
		})
}

// Ditto is federated averaging with a proximally regularized personal
// model at the center.
type Ditto struct {
	WeightedCommon `yaml:",inline"`
	Syncs          int     `yaml:"syncs" doc:"averagings per outer iteration, 0 … 10⁶; 0 means those of one outer iteration of weighted-nodes (2⌈T_s/τ⌉ + 1)"`
	Lambda         float64 `yaml:"lambda" doc:"λ of the personal objective L̂₀(v) + λ/2‖v − w‖² (the paper picks it from 0.05, 0.1, 0.2), finite, >= 0"`
	PersonalSteps  int     `yaml:"personal_steps" doc:"personal steps s per round (the paper: 25), 1 … 100000"`
}

// Server implements Algorithm.
func (*Ditto) Server() bool { return true }

// Validate implements Algorithm.
func (a *Ditto) Validate(n int) error {
	if err := a.WeightedCommon.validate(n); err != nil {
		return err
	}
	if err := validSyncs(a.Syncs); err != nil {
		return err
	}
	if !(a.Lambda >= 0) || math.IsInf(a.Lambda, 0) {
		return fmt.Errorf("lambda must be a finite number >= 0, got %v", a.Lambda)
	}
	if a.PersonalSteps < 1 || a.PersonalSteps > 100_000 {
		return fmt.Errorf("personal_steps must be in [1, 100000], got %d", a.PersonalSteps)
	}
	return nil
}

// Plan implements Algorithm.
func (a *Ditto) Plan(s *Setup) (ClientFactory, Program, error) {
	ntrain, err := minTrain(s)
	if err != nil {
		return nil, nil, err
	}
	k, syncs := s.Net.N-1, a.baselineSyncs(a.Syncs, ntrain)
	dim := len(s.X0)
	factory := func(i int) (Client, error) {
		model := s.Model.Clone()
		if i == 0 {
			c := &averagingCenter{k: k, w: uniform(k), x: slices.Clone(s.X0), model: model, data: s.Data[0],
				rounds: 2 * syncs, personal: slices.Clone(s.X0)}
			val := s.Data[0].Val
			c.batch = NewBatcher(val.N, a.Batch, rng.NewStream(s.Seed, 0, rng.PurposeBatch))
			g := make([]float64, dim)
			c.onSend = func() error {
				// s steps on L̂₀(v) + λ/2‖v − w^t‖² (Ditto's personal update).
				for range a.PersonalSteps {
					model.InnerGrad(g, c.personal, nil, val, c.batch.Next())
					floats.AddScaled(g, -a.Lambda, c.x)
					floats.AddScaled(g, a.Lambda, c.personal)
					floats.AddScaled(c.personal, -a.LR, g)
				}
				if !AllFinite(c.personal) {
					return fmt.Errorf("%w: Ditto's personal model (lower lr)", ErrNonFinite)
				}
				return nil
			}
			return &stepClient{c}, nil
		}
		data := s.Data[i].Train
		nd := &sgdNode{tau: a.Tau, lr: a.LR, x: make([]float64, dim), g: make([]float64, dim),
			batch: NewBatcher(data.N, a.Batch, rng.NewStream(s.Seed, i, rng.PurposeBatch))}
		nd.local = func() error {
			for range a.Tau {
				model.InnerGrad(nd.g, nd.x, nil, data, nd.batch.Next())
				floats.AddScaled(nd.x, -a.LR, nd.g)
			}
			return nil
		}
		return &stepClient{nd}, nil
	}
	return factory, phasesOf("ditto", a.Outer, 2*syncs), nil
}

func uniform(k int) []float64 {
	w := make([]float64, k)
	for j := range w {
		w[j] = 1 / float64(k)
	}
	return w
}

// sgdNode takes the center's model, runs its local update and uploads (the
// global-model part of Ditto and pFedMe; a node's own personal model does
// not change what the center learns, so it is not computed).
type sgdNode struct {
	tau    int
	lr     float64
	x, g   []float64
	batch  *Batcher
	local  func() error
	picked bool
}

func (*sgdNode) enter(int) {}

func (nd *sgdNode) Receive(r *Round, in []Message) error {
	if r.Index%2 == 1 {
		return nil
	}
	if v := fromCenter(in, KindModel); v != nil {
		copy(nd.x, v)
		nd.picked = true
	}
	return nil
}

func (nd *sgdNode) Send(r *Round, out Outbox) error {
	if r.Index%2 == 0 || !nd.picked {
		return nil
	}
	nd.picked = false
	if err := nd.local(); err != nil {
		return err
	}
	if !AllFinite(nd.x) {
		return fmt.Errorf("%w: the local model (lower lr)", ErrNonFinite)
	}
	sendCopy(out, []int{0}, KindModel, nd.x)
	return nil
}

// sgdNodeState is a node's state across outer steps: its model, whether a
// broadcast awaits its local update, and its minibatch position. The
// scratch (g, pFedMe's θ̃) is refilled before every use.
type sgdNodeState struct {
	X      []float64
	Picked bool
	Batch  BatcherState
}

// SaveState implements Stateful.
func (nd *sgdNode) SaveState() ([]byte, error) {
	b, err := nd.batch.save()
	if err != nil {
		return nil, err
	}
	return EncodeState(sgdNodeState{X: nd.x, Picked: nd.picked, Batch: b})
}

// LoadState implements Stateful.
func (nd *sgdNode) LoadState(b []byte) error {
	var st sgdNodeState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	if err := sameLen("local model", st.X, nd.x); err != nil {
		return err
	}
	if err := loadBatcher(nd.batch, st.Batch); err != nil {
		return err
	}
	copy(nd.x, st.X)
	nd.picked = st.Picked
	return nil
}
