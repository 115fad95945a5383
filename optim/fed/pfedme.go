package fed

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/models"
	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("pfedme",
		"pFedMe (T Dinh et al. 2020, Alg. 1) as the weighted-nodes paper runs it: each round every node takes tau local rounds, each solving θ̃ ≈ argmin f_k(θ; batch) + λ/2‖θ − w_loc‖² by at most inner_steps gradient steps (until the gradient norm is below delta) and moving w_loc ← w_loc − lr·λ(w_loc − θ̃); the center sets w ← (1 − beta) w + beta · mean and evaluates its personal model, the same proximal problem on all of D^valid around w. Two runtime rounds per averaging.",
		func() optim.Algorithm {
			return &PFedMe{Baseline: Baseline{WeightedCommon: DefaultWeightedCommon()}, Lambda: 15, Beta: 1, InnerSteps: 20, Delta: 0.005, PersonalLR: 0.05}
		})
}

// PFedMe is personalized FL with Moreau envelopes.
type PFedMe struct {
	Baseline   `yaml:",inline"`
	Lambda     float64 `yaml:"lambda" doc:"λ of the Moreau envelope (the paper picks it from 5, 10, 15), finite, > 0"`
	Beta       float64 `yaml:"beta" doc:"β of the server update (the paper: 1), in (0, 1]"`
	InnerSteps int     `yaml:"inner_steps" doc:"most gradient steps per personal problem (the paper: 20), 1 … 10000"`
	Delta      float64 `yaml:"delta" doc:"the personal problem is solved when its gradient norm is at most delta (the paper: 0.005), finite, >= 0"`
	PersonalLR float64 `yaml:"personal_lr" doc:"gradient step of the personal problem, finite, > 0; below 2/(L + λ)"`
}

// Validate implements optim.Algorithm.
func (a *PFedMe) Validate(n int) error {
	if err := a.Baseline.Validate(n); err != nil {
		return err
	}
	switch {
	case !(a.Beta > 0 && a.Beta <= 1):
		return fmt.Errorf("beta must be in (0, 1], got %v", a.Beta)
	case a.InnerSteps < 1 || a.InnerSteps > 10_000:
		return fmt.Errorf("inner_steps must be in [1, 10000], got %d", a.InnerSteps)
	case !(a.Delta >= 0) || math.IsInf(a.Delta, 0):
		return fmt.Errorf("delta must be a finite number >= 0, got %v", a.Delta)
	}
	if err := PositiveFinite("lambda", a.Lambda); err != nil {
		return err
	}
	return PositiveFinite("personal_lr", a.PersonalLR)
}

// prox writes into theta ≈ argmin f(θ; idx) + λ/2‖θ − w‖², from theta.
func (a *PFedMe) prox(model models.Bilevel[float64], d *datasets.Dataset, idx []int, theta, w, g []float64) {
	for range a.InnerSteps {
		model.InnerGrad(g, theta, nil, d, idx)
		floats.AddScaled(g, a.Lambda, theta)
		floats.AddScaled(g, -a.Lambda, w)
		if floats.Norm(g, 2) <= a.Delta {
			return
		}
		floats.AddScaled(theta, -a.PersonalLR, g)
	}
}

// Plan implements optim.Algorithm.
func (a *PFedMe) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	ntrain, err := MinTrain(s)
	if err != nil {
		return nil, nil, err
	}
	k, syncs := s.Net.N-1, a.PerOuter(ntrain)
	dim := len(s.X0)
	factory := func(i int) (optim.Client, error) {
		if i != 0 {
			return baselineNode(a.newNode(s, i)), nil
		}
		model := s.Model.Clone()
		c := &Averaging{W: Uniform(k), X: slices.Clone(s.X0), Model: model, Data: s.Data[0],
			Rounds: 2 * syncs, Personal: slices.Clone(s.X0), Prev: slices.Clone(s.X0)}
		g := make([]float64, dim)
		c.OnSend = func() error { copy(c.Prev, c.X); return nil }
		c.OnAverage = func(last bool) error {
			// w ← (1 − β) w + β · mean (the average is in c.X).
			floats.Scale(a.Beta, c.X)
			floats.AddScaled(c.X, 1-a.Beta, c.Prev)
			if last {
				copy(c.Personal, c.X)
				a.prox(model, s.Data[0].Val, nil, c.Personal, c.X, g)
				if !optim.AllFinite(c.Personal) {
					return fmt.Errorf("%w: pFedMe's personal model (lower personal_lr)", optim.ErrNonFinite)
				}
			}
			return nil
		}
		return &optim.Fixed{Behaviour: &Server{Strategy: c}}, nil
	}
	return factory, OuterPhases("pfedme", a.Outer, 2*syncs), nil
}

// pFedMeNode is a node's trainer: tau local rounds, each a proximal
// problem on a minibatch and a step of w_loc towards its solution θ̃.
type pFedMeNode struct {
	*SGD
	a     *PFedMe
	theta []float64
}

func (a *PFedMe) newNode(s *optim.Setup, i int) *pFedMeNode {
	return &pFedMeNode{SGD: NewSGD(s, i, a.Tau, a.LR, a.Batch, nil), a: a, theta: make([]float64, len(s.X0))}
}

// Train implements Trainer.
func (nd *pFedMeNode) Train() ([]float64, error) {
	a := nd.a
	for range a.Tau {
		copy(nd.theta, nd.x)
		a.prox(nd.model, nd.data, nd.batch.Next(), nd.theta, nd.x, nd.grad)
		// w_loc ← w_loc − η λ (w_loc − θ̃)
		floats.AddScaled(nd.x, -a.LR*a.Lambda, nd.x)
		floats.AddScaled(nd.x, a.LR*a.Lambda, nd.theta)
	}
	if !optim.AllFinite(nd.x) {
		return nil, fmt.Errorf("%w: the local model (lower lr)", optim.ErrNonFinite)
	}
	return nd.x, nil
}
