package optim

func init() {
	Algorithms.Register("fedavg-oracle",
		"FedAvg-Oracle, the upper baseline of Comm-FedBiO: federated averaging in which every client knows which of its labels are clean and trains on those samples only (λ_j = 1 for a clean sample, 0 for a corrupted one). Same loop and parameters as comm-fedbio without the hyper-gradient; needs data kind noisy-labels.",
		func() Algorithm { return &FedAvgOracle{FedBioTraining: defaultFedBioTraining()} })
}

// FedAvgOracle is FedAvg on the clean samples only.
type FedAvgOracle struct {
	FedBioTraining `yaml:",inline"`
}

// Server implements Algorithm.
func (*FedAvgOracle) Server() bool { return true }

// Validate implements Algorithm.
func (a *FedAvgOracle) Validate(n int) error { return a.FedBioTraining.validate(n) }

// Plan implements Algorithm.
func (a *FedAvgOracle) Plan(s *Setup) (ClientFactory, Program, error) {
	p := &fedBioPlan{train: a.FedBioTraining, mode: lambdaOracle}
	return p.build(s)
}
