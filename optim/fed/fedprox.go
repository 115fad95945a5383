package fed

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fedprox",
		"FedProx (Li et al. 2020): FedAvg whose clients minimize their loss plus μ/2‖x − x_global‖², a proximal term that keeps the local models near the global one; each local SGD step adds μ(x − x_global) to the gradient. mu: 0 is FedAvg. Same parameters as fedavg, plus mu.",
		func() optim.Algorithm {
			return &FedProx{FedAvg: *DefaultFedAvg(), Mu: 0.01}
		})
}

// FedProx is FedAvg with a proximal term on the clients' local problems.
type FedProx struct {
	FedAvg `yaml:",inline"`
	Mu     float64 `yaml:"mu" doc:"weight μ of the proximal term μ/2‖x − x_global‖², finite, >= 0 (0: FedAvg)"`
}

// Validate implements optim.Algorithm.
func (p *FedProx) Validate(n int) error {
	if !(p.Mu >= 0) || math.IsInf(p.Mu, 0) {
		return fmt.Errorf("mu must be a finite number >= 0, got %v", p.Mu)
	}
	return p.FedAvg.Validate(n)
}

// Plan implements optim.Algorithm: FedAvg's, with the proximal gradient.
func (p *FedProx) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return p.PlanWith(s, func(g, x, global []float64) {
		floats.AddScaled(g, p.Mu, x)
		floats.AddScaled(g, -p.Mu, global)
	})
}
