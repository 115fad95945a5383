package pdbo

import (
	"errors"
	"math"
	"testing"

	"hgpsim/optim"
)

// Adam and SGD minimize a separable quadratic ½Σ c_k (λ_k − t_k)².
func TestOuterOptimizersMinimizeQuadratic(t *testing.T) {
	c := []float64{1, 4, 0.5}
	target := []float64{1, -2, 3}
	for name, opt := range map[string]OuterOptimizer{
		"sgd":  &SGD{LR: []float64{0.5, 0.2, 1}},
		"adam": &Adam{LR: []float64{0.05, 0.05, 0.05}, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
	} {
		lambda := make([]float64, 3)
		g := make([]float64, 3)
		for it := 0; it < 3000; it++ {
			for k := range g {
				g[k] = c[k] * (lambda[k] - target[k])
			}
			opt.Step(lambda, g)
		}
		for k := range lambda {
			if math.Abs(lambda[k]-target[k]) > 1e-3 {
				t.Errorf("%s: λ[%d] = %.5f, want %.5f", name, k, lambda[k], target[k])
			}
		}
	}
}

// The first Adam step moves each coordinate by exactly its rate (bias
// correction makes m̂/√v̂ = sign(g)).
func TestAdamFirstStepIsSignTimesRate(t *testing.T) {
	a := &Adam{LR: []float64{0.1, 1}, Beta1: 0.9, Beta2: 0.999, Eps: 0}
	lambda := []float64{0, 0}
	a.Step(lambda, []float64{3, -0.001})
	if math.Abs(lambda[0]+0.1) > 1e-12 || math.Abs(lambda[1]-1) > 1e-12 {
		t.Errorf("first Adam step gave %v, want [-0.1 1]", lambda)
	}
}

type fixedEstimate []float64

func (f fixedEstimate) Send(*optim.Round, optim.Outbox) error       { return nil }
func (f fixedEstimate) Receive(*optim.Round, []optim.Message) error { return nil }
func (f fixedEstimate) Estimate() []float64                         { return append([]float64(nil), f...) }

func TestOuterStepRefusesNonFiniteHypergradient(t *testing.T) {
	o := &OuterStep{Lambda: []float64{0, 0}, Est: fixedEstimate{1, math.NaN()}, Opt: &SGD{LR: []float64{1, 1}}, Step: 4}
	err := o.Receive(&optim.Round{}, nil)
	if err == nil || !errors.Is(err, optim.ErrNonFinite) {
		t.Fatalf("want ErrNonFinite, got %v", err)
	}
	if o.Lambda[0] != 0 {
		t.Error("λ changed despite the error")
	}
}
