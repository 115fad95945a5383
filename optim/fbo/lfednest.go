package fbo

import (
	"fmt"
	"math/rand/v2"

	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("lfednest",
		"LFedNest (Tarzanagh et al. 2022, the light FedNest): per outer iteration N FedAvg-type lower rounds (τ_i = lower_local local SGD steps on y, the server averages), then one round in which each client builds its own local Neumann approximation p_i = λΣ_{n=0}^{T}(I − λ∇²_yyG_i)^n∇_yF_i (no aggregation of p), its own h_i, takes τ local x steps and uploads x: N+1 communication rounds. Node 0 is the server.",
		func() optim.Algorithm {
			p := defaultParams()
			p.Lower = "sgd"
			return &LFedNest{Params: p, Neumann: 5}
		})
}

// LFedNest is FedNest with local lower updates and local hyper-gradients.
type LFedNest struct {
	Params  `yaml:",inline"`
	Neumann int `yaml:"neumann" doc:"T, terms of each client's local Neumann series, 0 … 10⁴"`
}

// Validate implements Algorithm.
func (l *LFedNest) Validate(n int) error {
	if err := l.Params.Validate(n); err != nil {
		return err
	}
	if l.Lower != "sgd" {
		return fmt.Errorf("lower: LFedNest's lower level is local SGD (FedAvg type); lower must be sgd, got %q", l.Lower)
	}
	return validateNeumann(l.Neumann, "deterministic")
}

// Plan implements Algorithm.
func (l *LFedNest) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return plan("lfednest", l, s)
}

func (l *LFedNest) params() *Params { return &l.Params }

func (*LFedNest) draw(*rand.Rand) int { return -1 }

// schedule appends LFedNest's N + 1 rounds.
func (l *LFedNest) schedule(st []stage, iter, _ int) []stage {
	for k := range l.LowerSteps {
		st = append(st, stage{kind: stLowerLocal, iter: iter, first: k == 0 || l.Redraw, t: k, q: -1})
	}
	return append(st, stage{kind: stLocalUpper, iter: iter, first: l.Redraw, q: -1})
}

func (*LFedNest) hyperP([]float64, *server) {}
