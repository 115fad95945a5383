package optim

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/models"
)

func init() {
	Algorithms.Register("pfedme",
		"pFedMe (T Dinh et al. 2020, Alg. 1) as the weighted-nodes paper runs it: each round every node takes tau local rounds, each solving θ̃ ≈ argmin f_k(θ; batch) + λ/2‖θ − w_loc‖² by at most inner_steps gradient steps (until the gradient norm is below delta) and moving w_loc ← w_loc − lr·λ(w_loc − θ̃); the center sets w ← (1 − beta) w + beta · mean and evaluates its personal model, the same proximal problem on all of D^valid around w. Two runtime rounds per averaging.",
		func() Algorithm {
			return &PFedMe{WeightedCommon: defaultWeightedCommon(), Lambda: 15, Beta: 1, InnerSteps: 20, Delta: 0.005, PersonalLR: 0.05}
		})
}

// PFedMe is personalized FL with Moreau envelopes.
type PFedMe struct {
	WeightedCommon `yaml:",inline"`
	Syncs          int     `yaml:"syncs" doc:"averagings per outer iteration, 0 … 10⁶; 0 means those of one outer iteration of weighted-nodes (2⌈T_s/τ⌉ + 1)"`
	Lambda         float64 `yaml:"lambda" doc:"λ of the Moreau envelope (the paper picks it from 5, 10, 15), finite, > 0"`
	Beta           float64 `yaml:"beta" doc:"β of the server update (the paper: 1), in (0, 1]"`
	InnerSteps     int     `yaml:"inner_steps" doc:"most gradient steps per personal problem (the paper: 20), 1 … 10000"`
	Delta          float64 `yaml:"delta" doc:"the personal problem is solved when its gradient norm is at most delta (the paper: 0.005), finite, >= 0"`
	PersonalLR     float64 `yaml:"personal_lr" doc:"gradient step of the personal problem, finite, > 0; below 2/(L + λ)"`
}

// Server implements Algorithm.
func (*PFedMe) Server() bool { return true }

// Validate implements Algorithm.
func (a *PFedMe) Validate(n int) error {
	if err := a.WeightedCommon.validate(n); err != nil {
		return err
	}
	if err := validSyncs(a.Syncs); err != nil {
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
	if err := positiveFinite("lambda", a.Lambda); err != nil {
		return err
	}
	return positiveFinite("personal_lr", a.PersonalLR)
}

// prox writes into theta ≈ argmin f(θ; idx) + λ/2‖θ − w‖², from theta.
func (a *PFedMe) prox(model models.Bilevel, d *models.Dataset, idx []int, theta, w, g []float64) {
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

// Plan implements Algorithm.
func (a *PFedMe) Plan(s *Setup) (ClientFactory, Program, error) {
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
			c.prev = slices.Clone(s.X0)
			g := make([]float64, dim)
			c.onSend = func() error { copy(c.prev, c.x); return nil }
			c.onAverage = func(last bool) error {
				// w ← (1 − β) w + β · mean (the average is in c.x).
				floats.Scale(a.Beta, c.x)
				floats.AddScaled(c.x, 1-a.Beta, c.prev)
				if last {
					copy(c.personal, c.x)
					a.prox(model, s.Data[0].Val, nil, c.personal, c.x, g)
					if !AllFinite(c.personal) {
						return fmt.Errorf("%w: pFedMe's personal model (lower personal_lr)", ErrNonFinite)
					}
				}
				return nil
			}
			return &stepClient{c}, nil
		}
		data := s.Data[i].Train
		nd := &sgdNode{tau: a.Tau, lr: a.LR, x: make([]float64, dim), g: make([]float64, dim),
			batch: NewBatcher(data.N, a.Batch, rng.NewStream(s.Seed, i, rng.PurposeBatch))}
		theta := make([]float64, dim)
		nd.local = func() error {
			for range a.Tau {
				copy(theta, nd.x)
				a.prox(model, data, nd.batch.Next(), theta, nd.x, nd.g)
				// w_loc ← w_loc − η λ (w_loc − θ̃)
				floats.AddScaled(nd.x, -a.LR*a.Lambda, nd.x)
				floats.AddScaled(nd.x, a.LR*a.Lambda, theta)
			}
			return nil
		}
		return &stepClient{nd}, nil
	}
	return factory, phasesOf("pfedme", a.Outer, 2*syncs), nil
}
