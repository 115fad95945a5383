package pdbo

import (
	"fmt"
	"math"

	"hgpsim/optim"
)

// OuterOptimizer updates one client's hyperparameters λ_i from its
// hyper-gradient estimate (Alg. 1 line 7 generalizes to any first-order
// method). Learning rates are per coordinate so that groups of λ (label
// weights and ensemble weights) can have their own (PDBO paper Table 2).
type OuterOptimizer interface {
	Step(lambda, grad []float64)
}

// SGD is λ ← λ − η ⊙ g.
type SGD struct {
	LR []float64
}

// Step implements OuterOptimizer.
func (o *SGD) Step(lambda, grad []float64) {
	for k := range lambda {
		lambda[k] -= o.LR[k] * grad[k]
	}
}

// Adam is Kingma & Ba's method with bias correction, per-coordinate base
// rates, started from zero moments.
type Adam struct {
	LR           []float64
	Beta1, Beta2 float64
	Eps          float64
	m, v         []float64
	t            int
}

// Step implements OuterOptimizer.
func (o *Adam) Step(lambda, grad []float64) {
	if o.m == nil {
		o.m = make([]float64, len(lambda))
		o.v = make([]float64, len(lambda))
	}
	o.t++
	c1 := 1 - math.Pow(o.Beta1, float64(o.t))
	c2 := 1 - math.Pow(o.Beta2, float64(o.t))
	for k := range lambda {
		o.m[k] = o.Beta1*o.m[k] + (1-o.Beta1)*grad[k]
		o.v[k] = o.Beta2*o.v[k] + (1-o.Beta2)*grad[k]*grad[k]
		lambda[k] -= o.LR[k] * (o.m[k] / c1) / (math.Sqrt(o.v[k]/c2) + o.Eps)
	}
}

// OuterStep is the λ-update of Alg. 1 as a behaviour with no messages, so
// it runs on the client like every other phase: it reads the client's
// hyper-gradient estimate, refuses non-finite values, and steps λ in place.
type OuterStep struct {
	Lambda []float64
	Est    HyperEstimator
	Opt    OuterOptimizer
	Step   int // outer step s, for error messages
}

// Send implements optim.Behaviour: nothing travels.
func (o *OuterStep) Send(*optim.Round, optim.Outbox) error { return nil }

// Receive implements optim.Behaviour: λ ← optimizer step with the estimate.
func (o *OuterStep) Receive(*optim.Round, []optim.Message) error {
	g := o.Est.Estimate()
	if !optim.AllFinite(g) {
		return fmt.Errorf("outer step %d: %w in the hyper-gradient %v", o.Step, optim.ErrNonFinite, g)
	}
	o.Opt.Step(o.Lambda, g)
	if !optim.AllFinite(o.Lambda) {
		return fmt.Errorf("outer step %d: %w in λ", o.Step, optim.ErrNonFinite)
	}
	return nil
}

// SaveState implements optim.Stateful: plain SGD keeps nothing between steps.
func (o *SGD) SaveState() ([]byte, error) { return nil, nil }

// LoadState implements optim.Stateful.
func (o *SGD) LoadState([]byte) error { return nil }

// adamState is Adam's memory: its moments and step count.
type adamState struct {
	M, V []float64
	T    int
}

// SaveState implements optim.Stateful.
func (o *Adam) SaveState() ([]byte, error) {
	return optim.EncodeState(adamState{M: o.m, V: o.v, T: o.t})
}

// LoadState implements optim.Stateful.
func (o *Adam) LoadState(b []byte) error {
	var s adamState
	if err := optim.DecodeState(b, &s); err != nil {
		return err
	}
	if len(s.M) != len(s.V) || (s.M != nil && len(s.M) != len(o.LR)) {
		return fmt.Errorf("adam: saved moments of lengths %d and %d for %d coordinates", len(s.M), len(s.V), len(o.LR))
	}
	o.m, o.v, o.t = s.M, s.V, s.T
	return nil
}
