package fed

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("ditto",
		"Ditto (Li et al. 2021, Alg. 2) as the weighted-nodes paper runs it: every node takes part in each round (S_t = all), takes tau local SGD steps on the global model from the center and uploads; the center averages (w_k = 1/K) and personalizes for its target: each round personal_steps steps v ← v − lr(∇L̂₀(v) + λ(v − w)) on minibatches of D^valid. The center's personal model v is evaluated. Two runtime rounds per averaging.",
		func() optim.Algorithm {
			return &Ditto{Baseline: Baseline{WeightedCommon: DefaultWeightedCommon()}, Lambda: 0.1, PersonalSteps: 25}
		})
}

// Ditto is federated averaging with a proximally regularized personal
// model at the center.
type Ditto struct {
	Baseline      `yaml:",inline"`
	Lambda        float64 `yaml:"lambda" doc:"λ of the personal objective L̂₀(v) + λ/2‖v − w‖² (the paper picks it from 0.05, 0.1, 0.2), finite, >= 0"`
	PersonalSteps int     `yaml:"personal_steps" doc:"personal steps s per round (the paper: 25), 1 … 100000"`
}

// Validate implements optim.Algorithm.
func (a *Ditto) Validate(n int) error {
	if err := a.Baseline.Validate(n); err != nil {
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

// Plan implements optim.Algorithm.
func (a *Ditto) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	ntrain, err := MinTrain(s)
	if err != nil {
		return nil, nil, err
	}
	k, syncs := s.Net.N-1, a.PerOuter(ntrain)
	factory := func(i int) (optim.Client, error) {
		if i != 0 {
			return baselineNode(NewSGD(s, i, a.Tau, a.LR, a.Batch, nil)), nil
		}
		model, val := s.Model.Clone(), s.Data[0].Val
		c := &Averaging{W: Uniform(k), X: slices.Clone(s.X0), Model: model, Data: s.Data[0],
			Rounds: 2 * syncs, Personal: slices.Clone(s.X0),
			Batch: optim.NewBatcher(val.N, a.Batch, rng.NewStream(s.Seed, 0, rng.PurposeBatch))}
		g := make([]float64, len(s.X0))
		c.OnSend = func() error {
			// s steps on L̂₀(v) + λ/2‖v − w^t‖² (Ditto's personal update).
			for range a.PersonalSteps {
				model.InnerGrad(g, c.Personal, nil, val, c.Batch.Next())
				floats.AddScaled(g, -a.Lambda, c.X)
				floats.AddScaled(g, a.Lambda, c.Personal)
				floats.AddScaled(c.Personal, -a.LR, g)
			}
			if !optim.AllFinite(c.Personal) {
				return fmt.Errorf("%w: Ditto's personal model (lower lr)", optim.ErrNonFinite)
			}
			return nil
		}
		return &optim.Fixed{Behaviour: &Server{Strategy: c}}, nil
	}
	return factory, OuterPhases("ditto", a.Outer, 2*syncs), nil
}

// baselineNode is a node of the weighted-nodes paper's baselines: it
// trains on the first broadcast that reaches it in a round, as they always
// did. A node's own personal model does not change what the center learns,
// so it is not computed.
func baselineNode(t Trainer) optim.Client {
	return &optim.Fixed{Behaviour: &Client{Trainer: t, Oldest: true}}
}
