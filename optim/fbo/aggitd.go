package fbo

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fbo-aggitd",
		"FBO-AggITD (fbo-aggitd paper Alg. 3): per outer iteration AggITD (Alg. 1) — for t = 0 … N a round aggregating q_i = ∇_yG_i(y^t) with r_i = ∇_yF_i (t = Q) or z_i = z^{t−1} − λ∇²_yyG_i z^{t−1} (t > Q), Q ~ U{0 … N} drawn per call, and for t < N a One-Round-Lower round (Alg. 2, svrg or sgd) — then the h round (p = λ(N+1)z^N, h_i = ∇_xF_i − ∇²_xyG_i·p) and One-Round-Upper (Alg. 4, τ local x steps with the SVRG-type correction of the direct part on fresh samples), warm-starting y: 2N+3 communication rounds (each a down and an up runtime round). Node 0 is the server; needs model.head hyper-representation or another bilevel head.",
		func() optim.Algorithm { return &AggITD{Params: defaultParams()} })
}

// AggITD is FBO-AggITD.
type AggITD struct {
	Params `yaml:",inline"`
}

// Plan implements Algorithm.
func (a *AggITD) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return plan("fbo-aggitd", a, s)
}

func (a *AggITD) params() *Params { return &a.Params }

// draw returns Q ~ U{0 … N}.
func (a *AggITD) draw(r *rand.Rand) int { return r.IntN(a.LowerSteps + 1) }

// schedule appends AggITD's 2N+3 rounds.
func (a *AggITD) schedule(st []stage, iter, q int) []stage {
	n := a.LowerSteps
	for t := 0; t <= n; t++ {
		st = append(st, stage{kind: stLowerA, iter: iter, first: t == 0 || a.Redraw, t: t, q: q})
		if t < n {
			st = append(st, stage{kind: stLowerB, iter: iter, t: t, q: q})
		}
	}
	return append(st, stage{kind: stHyper, iter: iter, q: q}, stage{kind: stUpper, iter: iter, q: q})
}

// hyperP is p = λ(N+1)z^N.
func (a *AggITD) hyperP(dst []float64, s *server) {
	if s.z != nil {
		floats.ScaleTo(dst, a.Lambda*float64(a.LowerSteps+1), s.z)
	}
}
