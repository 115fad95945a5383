package fedbio

import (
	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fedavg-oracle",
		"FedAvg-Oracle, the upper baseline of Comm-FedBiO: federated averaging in which every client knows which of its labels are clean and trains on those samples only (λ_j = 1 for a clean sample, 0 for a corrupted one). Same loop and parameters as comm-fedbio without the hyper-gradient; needs data kind noisy-labels.",
		func() optim.Algorithm { return &FedAvgOracle{FederatedTraining: defaultTraining()} })
}

// FedAvgOracle is FedAvg on the clean samples only.
type FedAvgOracle struct {
	optim.FederatedTraining `yaml:",inline"`
}

// Validate implements Algorithm.
func (a *FedAvgOracle) Validate(n int) error { return a.FederatedTraining.Validate(n) }

// Plan implements Algorithm.
func (a *FedAvgOracle) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	p := &plan{train: a.FederatedTraining, mode: lambdaOracle}
	return p.build(s)
}
