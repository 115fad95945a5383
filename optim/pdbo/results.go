package pdbo

import "hgpsim/optim"

// SGPArgs are the arguments of an SGP phase.
type SGPArgs struct {
	// Warm starts the phase from the client's last iterate instead of the
	// initial parameters.
	Warm bool `wire:"1"`
	// ReportState ends the phase with the client's push-sum state in its
	// SGPResult.
	ReportState bool `wire:"2"`
}

// SGPResult is what a client reports at the end of an SGP phase: its λ_i
// (for the summary's ‖λ‖); from a tracked phase, its Alg. 2 estimates
// p̄_i· and δ̄_{·→i}; when SGPArgs.ReportState asked for it, its push-sum
// state (z_i, ω_i), the input of a dense oracle.
type SGPResult struct {
	Lambda   []float64 `wire:"1"`
	PBar     []float64 `wire:"2"`
	DeltaBar []float64 `wire:"3"`
	Z        []float64 `wire:"4"`
	Omega    float64   `wire:"5"`
}

// HyperResult is what a client reports at the end of a hyper-gradient
// phase: its estimate.
type HyperResult struct {
	Hypergradient []float64 `wire:"1"`
}

// SGPResults returns each client's λ_i and, from a tracked phase, its
// estimates p̄_i· and δ̄_{·→i}, from the results of an SGP phase.
func (a *Alg1) SGPResults(rs []optim.Result) (lambda, pBar, deltaBar [][]float64, err error) {
	res, err := optim.ResultsOf[SGPResult](rs)
	if err != nil {
		return nil, nil, nil, err
	}
	lambda, pBar, deltaBar = make([][]float64, len(rs)), make([][]float64, len(rs)), make([][]float64, len(rs))
	for i, r := range res {
		lambda[i], pBar[i], deltaBar[i] = r.Lambda, r.PBar, r.DeltaBar
	}
	return lambda, pBar, deltaBar, nil
}

// Hypergradients returns each client's estimate from the results of a
// hyper-gradient phase.
func (a *Alg1) Hypergradients(rs []optim.Result) ([][]float64, error) {
	res, err := optim.ResultsOf[HyperResult](rs)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(rs))
	for i, r := range res {
		out[i] = r.Hypergradient
	}
	return out, nil
}
