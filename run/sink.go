package run

import (
	"errors"
	"math"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// Aggregate is the across-client view of one evaluated round.
type Aggregate = optim.Aggregate

// OuterRecord is the evaluation of one outer step.
type OuterRecord struct {
	Step int `json:"step"`
	Aggregate
	HypergradientNorm float64 `json:"hypergradient_norm,omitempty"` // of the estimate taken after this step's SGP run
	LambdaNorm        float64 `json:"lambda_norm"`                  // ‖λ⁽ˢ⁾‖ stacked over clients
}

// outerLoop is a program with an outer loop (such as the PDBO paper's
// Alg. 1, whose parameters are the scenario's sgp, hypergradient and outer
// sections): the summary lists its steps and, with hypergradient.oracle,
// compares its hyper-gradient estimates with its dense oracle.
type outerLoop interface {
	// StoppedEarly reports that outer.patience ended the loop early.
	StoppedEarly() bool
	// ReportsStates reports that every SGP phase ends with each client's
	// state in its Result, the oracle's input.
	ReportsStates() bool
	// HyperLR is the step of the linearized map the estimates are of.
	HyperLR() float64
	// Oracle returns every client's hyper-gradient by the dense oracle at
	// the states the last SGP phase reported, with the exact p̄ (pTrue).
	Oracle(nw *graph.Network, pTrue [][]float64, model models.Bilevel[float64], data []datasets.ClientData, states []optim.Result) ([][]float64, error)
	// SGPResults reads the results of an SGP phase: each client's λ_i
	// and, from a tracked phase, its estimates p̄_i· and δ̄_{·→i}.
	SGPResults(rs []optim.Result) (lambda, pBar, deltaBar [][]float64, err error)
	// Hypergradients reads the results of a hyper-gradient phase: each
	// client's estimate.
	Hypergradients(rs []optim.Result) ([][]float64, error)
}

// runSink turns a run's reports into metrics.jsonl lines, progress
// and the summary. It only reads what the driver reports: nothing here
// reaches into a client.
type runSink struct {
	run      *Run
	prog     outerLoop // nil for programs without an outer loop
	mw       *metricsWriter
	progress Progress
	sum      *Summary
	final    Aggregate // the last evaluation of a training phase
	evals    []scenarios.Eval
	traffic  optim.Traffic  // cumulative
	states   []optim.Result // each client's state after the last SGP phase (oracle runs)
	pTrue    [][]float64    // cache of expectedPushWeights
	div      divergence
}

// expectedPushWeights returns the exact p̄ of the run's network, computed
// once: it is O(n³) and the network never changes during a run.
func (s *runSink) expectedPushWeights() [][]float64 {
	if s.pTrue == nil {
		s.pTrue = s.run.Net.ExpectedPushWeights()
	}
	return s.pTrue
}

func newRunSink(run *Run, mw *metricsWriter, progress Progress) *runSink {
	sc := run.Scenario
	prog, _ := run.program.(outerLoop)
	s := &runSink{run: run, prog: prog, mw: mw, progress: progress,
		sum: &Summary{Name: sc.Name, Seed: sc.Seed, Clients: sc.Clients, Network: run.Net.Kind,
			Driver: sc.Runtime.DriverName(), Algorithm: sc.Algorithm.Name, Traffic: map[string]optim.Traffic{}}}
	if prog != nil {
		s.sum.Rounds = sc.SGP.Rounds
	}
	return s
}

// Evaluated implements optim.Sink: a round of estimates (a hyper-gradient
// phase) or of losses and accuracies (any training phase).
func (s *runSink) Evaluated(ev *optim.RoundEvent) error {
	if err := checkStats(*ev); err != nil {
		return err
	}
	agg := Aggregate{}
	s.traffic.Add(ev.Traffic)
	if hasEstimates(ev.Clients) {
		s.mw.hyper(*ev)
	} else if observed(ev.Clients) {
		agg = ev.Summarize()
		s.div.evaluated(ev)
		s.mw.round(*ev, agg)
		s.evals = append(s.evals, scenarios.Eval{Phase: ev.Phase, Step: ev.Step, Round: ev.Round, Agg: agg, Traffic: s.traffic})
	} else {
		return nil // a phase without evaluations (the λ-update)
	}
	if s.progress != nil {
		s.progress(*ev, agg, ev.Rounds)
	}
	return nil
}

func hasEstimates(stats []optim.Stats) bool {
	for _, st := range stats {
		if st.Hyper != nil {
			return true
		}
	}
	return false
}

func observed(stats []optim.Stats) bool {
	for _, st := range stats {
		if st.TrainN > 0 || st.ValN > 0 || st.TestN > 0 {
			return true
		}
	}
	return false
}

// Finished implements optim.Sink.
func (s *runSink) Finished(rep *optim.PhaseReport) error {
	t := s.sum.Traffic[rep.Spec.Name]
	t.Add(rep.Traffic)
	s.sum.Traffic[rep.Spec.Name] = t
	switch rep.Spec.Name {
	case "sgp":
		if rep.Spec.Continued {
			return nil // a part of a cut phase: the last part reports it
		}
		var lambda, pBar, deltaBar [][]float64
		if s.prog != nil {
			var err error
			if lambda, pBar, deltaBar, err = s.prog.SGPResults(rep.Results); err != nil {
				return err
			}
		}
		rec := OuterRecord{Step: rep.Spec.Step, Aggregate: rep.SummarizeLast(), LambdaNorm: stackedNorm(lambda)}
		s.sum.Outer = append(s.sum.Outer, rec)
		if rep.Delivered != nil {
			s.sum.Estimates = s.estimateError(rep, pBar, deltaBar)
		}
		if s.prog != nil && s.prog.ReportsStates() {
			s.states = append(s.states[:0], rep.Results...)
		}
	case "hypergradient", "outer":
		if rep.Spec.Name == "outer" {
			return nil
		}
		hs, err := s.hypergradient(rep)
		if err != nil {
			return err
		}
		s.sum.Hypergradient = hs
		s.sum.Outer[len(s.sum.Outer)-1].HypergradientNorm = hs.Norm
		s.div.hypergradient(rep.Spec.Step, rep.Spec.TotalRounds(), hs.Norm)
	default:
		if rep.Last != nil && observed(rep.Last) {
			s.final = rep.SummarizeLast()
		}
	}
	return nil
}

// summary completes the summary once the program has ended: the final
// evaluation and, with an outer loop, the best step.
func (s *runSink) summary() (*Summary, error) {
	sum := s.sum
	sum.Evals = s.evals
	sum.Blowups = s.div.Blowups
	if s.prog == nil {
		sum.Final = s.final
		return sum, nil
	}
	sum.Final = sum.Outer[len(sum.Outer)-1].Aggregate
	if s.run.Scenario.Outer.Steps == 0 {
		// No outer loop: Final says it all; best step and λ mean nothing.
		sum.Outer = nil
		return sum, nil
	}
	// The best step is one whose SGP phase did not blow up (its model's
	// accuracy is not to be trusted), unless every one did.
	best := -1
	for k, r := range sum.Outer {
		if !s.div.blownUpStep(r.Step) && (best < 0 || r.ValAcc > sum.Outer[best].ValAcc) {
			best = k
		}
	}
	if best < 0 {
		best = 0
		for k, r := range sum.Outer {
			if r.ValAcc > sum.Outer[best].ValAcc {
				best = k
			}
		}
	}
	b := sum.Outer[best]
	sum.Best = &b
	sum.StoppedEarly = s.prog.StoppedEarly()
	return sum, nil
}

// estimateError compares the Alg. 2 estimates of a tracked SGP phase with
// the network's expectation and with what it delivered.
func (s *runSink) estimateError(rep *optim.PhaseReport, pBars, deltaBars [][]float64) *EstimateError {
	nw := s.run.Net
	pTrue := s.expectedPushWeights()
	d := rep.Delivered
	e := &EstimateError{}
	for i, pBar := range pBars {
		deltaBar := deltaBars[i]
		// Client i averages over the rounds it was online (all of them
		// without churn or crashes).
		t := d.Online[i]
		for j := range pBar {
			e.PBarMaxAbs = math.Max(e.PBarMaxAbs, math.Abs(pBar[j]-pTrue[i][j]))
			// deltaBar[j] estimates δ̄_{j→i}.
			e.DeltaBarMaxAbs = math.Max(e.DeltaBarMaxAbs, math.Abs(deltaBar[j]-nw.Delta(j, i)))
			if t == 0 {
				continue // offline throughout: it estimated nothing
			}
			e.Delivered.PBarMaxAbs = math.Max(e.Delivered.PBarMaxAbs, math.Abs(pBar[j]-d.WeightSum[i][j]/t))
			e.Delivered.DeltaBarMaxAbs = math.Max(e.Delivered.DeltaBarMaxAbs, math.Abs(deltaBar[j]-d.Count[j][i]/t))
		}
	}
	return e
}

// hypergradient summarizes a hyper-gradient phase and, with oracle: true,
// compares it with the dense fixed-point oracle linearized at the same
// state with the true p̄.
func (s *runSink) hypergradient(rep *optim.PhaseReport) (*HypergradientSummary, error) {
	sc := s.run.Scenario
	got, err := s.prog.Hypergradients(rep.Results)
	if err != nil {
		return nil, err
	}
	hs := &HypergradientSummary{Estimator: sc.Hypergradient.Estimator, Rounds: rep.Spec.Rounds,
		LR: s.prog.HyperLR(), Norm: stackedNorm(got)}
	if !sc.Hypergradient.Oracle {
		return hs, nil
	}
	r := s.run
	oracle, err := s.prog.Oracle(r.Net, s.expectedPushWeights(), r.Model, r.Data, s.states)
	var missing interface{ Status() string } // pdbo.OracleError: singular or diverges
	if errors.As(err, &missing) {
		// No fixed point to compare with: say so rather than an error
		// against a solve that HGP's diverging sums never approach.
		hs.NoOracle = err.Error()
		return hs, nil
	}
	if err != nil {
		return nil, err
	}
	diff := make([][]float64, len(got))
	for i := range got {
		diff[i] = make([]float64, len(got[i]))
		for k := range got[i] {
			diff[i][k] = got[i][k] - oracle[i][k]
		}
	}
	e := stackedNorm(diff) / stackedNorm(oracle)
	hs.OracleRelError = &e
	return hs, nil
}
