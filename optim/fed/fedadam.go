package fed

import (
	"math"

	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fedadam",
		"FedAdam (Reddi et al. 2021, Alg. 2): FedAvg whose server takes an Adam step on the pseudo-gradient Δ, the mean of the updates x_i − x that arrived: m ← β1·m + (1 − β1)·Δ, v ← β2·v + (1 − β2)·Δ², x ← x + η·m/(√v + τ), from m = 0 and v = τ² (no bias correction; a round without uploads changes nothing). Same parameters as fedavg, plus server_lr, beta1, beta2 and tau.",
		func() optim.Algorithm { return &FedAdam{DefaultSecondMoment()} })
}

// FedAdam is FedAvg with Adam at the server.
type FedAdam struct {
	SecondMoment `yaml:",inline"`
}

// Plan implements optim.Algorithm: FedAvg's clients, the server step.
func (a *FedAdam) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return a.PlanSteps(s, nil, a.Step)
}

// Step is the Adam server step (a ServerStep).
func (a *FedAdam) Step(st *ServerState) StepFunc {
	m, v := st.Vec("m", 0), st.Vec("v", a.Tau*a.Tau) // saved with the server
	return func(x, delta []float64) {
		for j, d := range delta {
			m[j] = a.Beta1*m[j] + (1-a.Beta1)*d
			v[j] = a.Beta2*v[j] + (1-a.Beta2)*d*d
			x[j] += a.ServerLR * m[j] / (math.Sqrt(v[j]) + a.Tau)
		}
	}
}
