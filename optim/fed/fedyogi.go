package fed

import "hgpsim/optim"

func init() {
	optim.Algorithms.Register("fedyogi",
		"FedYogi (Reddi et al. 2021, Alg. 2): FedAdam whose second moment moves toward Δ² by (1 − β2)·Δ² per round, v ← v − (1 − β2)·Δ²·sign(v − Δ²), rather than by a fraction (1 − β2) of the gap, so that it grows and shrinks in controlled steps. Same parameters as fedadam.",
		func() optim.Algorithm { return &FedYogi{DefaultSecondMoment()} })
}

// FedYogi is FedAvg with Yogi at the server.
type FedYogi struct {
	SecondMoment `yaml:",inline"`
}

// Plan implements optim.Algorithm: FedAvg's clients, the server step.
func (a *FedYogi) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return a.PlanSteps(s, nil, a.Step)
}

// Step is the Yogi server step (a ServerStep).
func (a *FedYogi) Step(st *ServerState) StepFunc {
	m, v := a.Moments(st)
	return func(x, delta []float64) {
		for j, d := range delta {
			switch d2 := d * d; {
			case v[j] > d2:
				v[j] -= (1 - a.Beta2) * d2
			case v[j] < d2:
				v[j] += (1 - a.Beta2) * d2
			}
			a.Move(x, m, v, j, d)
		}
	}
}
