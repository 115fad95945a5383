package fed

import (
	"fmt"
	"math"
)

// Adaptive are the parameters of the adaptive server steps of Reddi et
// al. 2021 ("Adaptive Federated Optimization", Alg. 2): FedAvg's, plus
// the server's step size η, momentum β1 and adaptivity τ. FedAdam and
// FedYogi add β2 (SecondMoment); FedAdagrad has none.
type Adaptive struct {
	FedAvg   `yaml:",inline"`
	ServerLR float64 `yaml:"server_lr" doc:"server step size η of x ← x + η·m/(√v + τ), finite, > 0"`
	Beta1    float64 `yaml:"beta1" doc:"momentum β1 of m ← β1·m + (1 − β1)·Δ, in [0, 1) (0: no momentum)"`
	Tau      float64 `yaml:"tau" doc:"adaptivity τ of the server step (v starts at τ²; the paper tunes it in 10⁻⁶ … 1), finite, > 0"`
}

// DefaultAdaptive returns FedAvg's defaults with the paper's β1 = 0.9 and
// τ = 10⁻³, and η = 0.1 (FedAdagrad's best on adaptive-fedadagrad.yaml).
func DefaultAdaptive() Adaptive {
	return Adaptive{FedAvg: *DefaultFedAvg(), ServerLR: 0.1, Beta1: 0.9, Tau: 1e-3}
}

// Validate implements optim.Algorithm.
func (a *Adaptive) Validate(n int) error {
	if err := PositiveFinite("server_lr", a.ServerLR); err != nil {
		return err
	}
	if err := PositiveFinite("tau", a.Tau); err != nil {
		return err
	}
	if !(a.Beta1 >= 0 && a.Beta1 < 1) {
		return fmt.Errorf("beta1 must be in [0, 1), got %v", a.Beta1)
	}
	return a.FedAvg.Validate(n)
}

// Moments declares the server's first moment m = 0 and second moment
// v = τ² on st (the paper's initialization) and returns them.
func (a *Adaptive) Moments(st *ServerState) (m, v []float64) {
	return st.Vec("m", 0), st.Vec("v", a.Tau*a.Tau)
}

// Move takes the adaptive step on coordinate j: the first moment of Δ_j,
// then x_j ← x_j + η·m_j/(√v_j + τ), with v_j already updated.
func (a *Adaptive) Move(x, m, v []float64, j int, delta float64) {
	m[j] = a.Beta1*m[j] + (1-a.Beta1)*delta
	x[j] += a.ServerLR * m[j] / (math.Sqrt(v[j]) + a.Tau)
}

// SecondMoment are the parameters of FedAdam and FedYogi: Adaptive's and
// the decay β2 of the second moment.
type SecondMoment struct {
	Adaptive `yaml:",inline"`
	Beta2    float64 `yaml:"beta2" doc:"decay β2 of the second moment v, in [0, 1)"`
}

// DefaultSecondMoment returns DefaultAdaptive with the paper's β2 = 0.99
// and η = 0.01 (the best of FedAdam and FedYogi on their scenarios).
func DefaultSecondMoment() SecondMoment {
	a := DefaultAdaptive()
	a.ServerLR = 0.01
	return SecondMoment{Adaptive: a, Beta2: 0.99}
}

// Validate implements optim.Algorithm.
func (a *SecondMoment) Validate(n int) error {
	if !(a.Beta2 >= 0 && a.Beta2 < 1) {
		return fmt.Errorf("beta2 must be in [0, 1), got %v", a.Beta2)
	}
	return a.Adaptive.Validate(n)
}
