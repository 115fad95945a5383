package fedbio

import (
	"fmt"
	"math"

	"hgpsim/optim"
)

func init() {
	optim.Algorithms.Register("fedbio-preprocess",
		"Preprocess, a baseline of Comm-FedBiO (after Tuor et al.): the server trains a benchmark model on its clean validation set (bench_steps full-batch gradient steps) and sends it to every client once; each client drops the samples whose label the benchmark gives probability below threshold, then FedAvg trains on the kept samples. Needs data kind noisy-labels.",
		func() optim.Algorithm {
			return &FedBioPreprocess{FederatedTraining: defaultTraining(), BenchSteps: 200, BenchLR: 0.5, Threshold: 0.1}
		})
}

// FedBioPreprocess is the Preprocess baseline.
type FedBioPreprocess struct {
	optim.FederatedTraining `yaml:",inline"`
	BenchSteps              int     `yaml:"bench_steps" doc:"full-batch gradient steps of the benchmark model on the validation set, 1 … 10⁵"`
	BenchLR                 float64 `yaml:"bench_lr" doc:"step size of the benchmark's training, finite, > 0"`
	Threshold               float64 `yaml:"threshold" doc:"a sample is kept when the benchmark's probability of its label is at least this, in [0, 1] (tuned: the paper reports the best)"`
}

// Validate implements Algorithm.
func (a *FedBioPreprocess) Validate(n int) error {
	if err := a.FederatedTraining.Validate(n); err != nil {
		return err
	}
	switch {
	case a.BenchSteps < 1 || a.BenchSteps > 100_000:
		return fmt.Errorf("bench_steps must be in [1, 10⁵], got %d", a.BenchSteps)
	case !(a.BenchLR > 0) || math.IsInf(a.BenchLR, 0):
		return fmt.Errorf("bench_lr must be a finite number > 0, got %v", a.BenchLR)
	case !(a.Threshold >= 0 && a.Threshold <= 1):
		return fmt.Errorf("threshold must be in [0, 1], got %v", a.Threshold)
	}
	return nil
}

// Plan implements Algorithm.
func (a *FedBioPreprocess) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	p := &plan{train: a.FederatedTraining, mode: lambdaFilter, benchSteps: a.BenchSteps, benchLR: a.BenchLR, threshold: a.Threshold}
	return p.build(s)
}
