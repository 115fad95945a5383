package fed

import "hgpsim/optim"

func init() {
	optim.Algorithms.Register("fedadagrad",
		"FedAdagrad (Reddi et al. 2021, Alg. 2): FedAvg whose server takes an Adagrad step on the pseudo-gradient Δ, the mean of the updates x_i − x that arrived: m ← β1·m + (1 − β1)·Δ, v ← v + Δ², x ← x + η·m/(√v + τ), from m = 0 and v = τ² (a round without uploads changes nothing). Same parameters as fedavg, plus server_lr, beta1 and tau.",
		func() optim.Algorithm { return &FedAdagrad{DefaultAdaptive()} })
}

// FedAdagrad is FedAvg with Adagrad at the server.
type FedAdagrad struct {
	Adaptive `yaml:",inline"`
}

// Plan implements optim.Algorithm: FedAvg's clients, the server step.
func (a *FedAdagrad) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return a.PlanSteps(s, nil, a.Step)
}

// Step is the Adagrad server step (a ServerStep).
func (a *FedAdagrad) Step(st *ServerState) StepFunc {
	m, v := a.Moments(st)
	return func(x, delta []float64) {
		for j, d := range delta {
			v[j] += d * d
			a.Move(x, m, v, j, d)
		}
	}
}
