package fbo

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fednest",
		"FedNest (Tarzanagh et al. 2022; AID-based, the fbo-aggitd paper's baseline): per outer iteration N lower iterations of two rounds (aggregate q = mean ∇_yG_i, then One-Round-Lower), a round for p₀ = mean ∇_yF_i, T Neumann rounds p_t = mean (I − λ∇²_yyG_i)p_{t−1} (deterministic: p = λΣ_{t=0}^{T} p_t; stochastic: T' ~ U{0 … T−1} rounds and p = λT·p_{T'}; released: the authors' code's accumulation, client-held terms and an unreset mean over all uploads), the h round and One-Round-Upper (τ local x steps): 2N+T+3 communication rounds (2N+T'+3 stochastic). Node 0 is the server.",
		func() optim.Algorithm { return &FedNest{Params: defaultParams(), Neumann: 5, Variant: "deterministic"} })
}

// FedNest is the AID-based federated bilevel method.
type FedNest struct {
	Params  `yaml:",inline"`
	Neumann int    `yaml:"neumann" doc:"T, Neumann rounds of the Hessian-inverse-vector product, 0 … 10⁴ (stochastic: 1 … 10⁴)"`
	Variant string `yaml:"variant" doc:"deterministic (T rounds, p = λ Σ_{t=0}^{T} p_t), stochastic (T' ~ U{0 … T−1} rounds, p = λT·p_{T'}) or released (the FedNest authors' released code: T rounds in which client i carries its own term c_i ← (I − λ∇²_yyG_i)c_i from c_i = p₀ and uploads p_{t−1} + c_i, and the server's p_t is the mean of every upload of rounds 1 … t, its list not reset between rounds; p = λp_T)"`
}

// Validate implements Algorithm.
func (f *FedNest) Validate(n int) error {
	if err := f.Params.Validate(n); err != nil {
		return err
	}
	return validateNeumann(f.Neumann, f.Variant)
}

// Plan implements Algorithm.
func (f *FedNest) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return plan("fednest", f, s)
}

func (f *FedNest) params() *Params { return &f.Params }

// draw returns the Neumann rounds of the iteration: T, or T' ~ U{0 … T−1}.
func (f *FedNest) draw(r *rand.Rand) int {
	if f.Variant == "stochastic" {
		return r.IntN(f.Neumann)
	}
	return f.Neumann
}

// schedule appends FedNest's 2N + T + 3 rounds (T' for the stochastic
// variant).
func (f *FedNest) schedule(st []stage, iter, t int) []stage {
	for k := range f.LowerSteps {
		st = append(st, stage{kind: stLowerA, iter: iter, first: k == 0 || f.Redraw, t: k, q: -1},
			stage{kind: stLowerB, iter: iter, t: k, q: -1})
	}
	st = append(st, stage{kind: stP0, iter: iter, first: f.Redraw, q: -1})
	for k := range t {
		st = append(st, stage{kind: stNeumann, iter: iter, t: k + 1, q: -1, last: k == t-1})
	}
	return append(st, stage{kind: stHyper, iter: iter, q: -1}, stage{kind: stUpper, iter: iter, q: -1})
}

// hyperP is λ Σ p_t, λT·p_{T'} or the released code's λp_T.
func (f *FedNest) hyperP(dst []float64, s *server) {
	switch f.Variant {
	case "stochastic":
		floats.ScaleTo(dst, f.Lambda*float64(f.Neumann), s.pcur)
		return
	case "released":
		floats.ScaleTo(dst, f.Lambda, s.pcur)
		return
	}
	floats.ScaleTo(dst, f.Lambda, s.psum)
}
