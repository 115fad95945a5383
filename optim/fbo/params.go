package fbo

import (
	"fmt"
	"math"

	"hgpsim/optim"
)

// Params are the parameters the federated bilevel algorithms share.
type Params struct {
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
	Redraw        bool    `yaml:"redraw" doc:"draw S afresh for every lower round (and once more for the hyper-gradient part of FedNest and LFedNest), as the FedNest authors' released code does, instead of once per outer iteration (the papers' Alg. 1–4); each draw sends x"`
}

// Server reports that the algorithms of the family run node 0 as their
// server (the promoted method implements optim.Algorithm's).
func (*Params) Server() bool { return true }

// TrainsLambda reports that the algorithms optimize the model's λ (so a
// scenario may choose a bilevel head).
func (*Params) TrainsLambda() bool { return true }

func defaultParams() Params {
	return Params{OuterSteps: 100, Participation: 0.1, LowerSteps: 5, Beta: 0.003, Alpha: 0.01, Lambda: 0.01,
		Tau: 1, LowerLocal: 1, Lower: "svrg", Batch: 64, EvalEvery: 5}
}

// Validate checks the shared parameters for n nodes (server included).
func (p *Params) Validate(n int) error {
	fin := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch {
	case p.OuterSteps < 1 || p.OuterSteps > 1_000_000:
		return fmt.Errorf("outer_steps must be in [1, 10⁶], got %d", p.OuterSteps)
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
	case p.EvalEvery < 1 || p.EvalEvery > 10_000:
		return fmt.Errorf("eval_every must be in [1, 10⁴], got %d", p.EvalEvery)
	}
	return optim.ValidateServer(p.Participation, p.Batch, n)
}

// validateNeumann checks the Neumann terms T of FedNest and LFedNest.
func validateNeumann(t int, variant string) error {
	switch {
	case variant != "deterministic" && variant != "stochastic" && variant != "released":
		return fmt.Errorf("variant must be deterministic, stochastic or released, got %q", variant)
	case t < 0 || t > 10_000:
		return fmt.Errorf("neumann must be in [0, 10⁴], got %d", t)
	case variant == "stochastic" && t < 1:
		return fmt.Errorf("neumann must be >= 1 for the stochastic variant (T' ~ U{0 … T−1})")
	}
	return nil
}
