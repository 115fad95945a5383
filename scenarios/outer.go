package scenarios

import (
	"context"

	"hgpsim/optim"
)

// OuterRecord is the evaluation of one outer step.
type OuterRecord struct {
	Step int `json:"step"`
	Aggregate
	HypergradientNorm float64 `json:"hypergradient_norm,omitempty"` // of the estimate taken after this step's SGP run
	LambdaNorm        float64 `json:"lambda_norm"`                  // ‖λ⁽ˢ⁾‖ stacked over clients
}

// outerLoop runs Alg. 1: for s = 0…S, SGP with λ⁽ˢ⁾ (evaluated), then —
// unless s = S — the hyper-gradient phase and every client's λ-update.
// Every phase goes through the same driver.
type outerLoop struct {
	run      *Run
	driver   optim.Driver
	mw       *metricsWriter
	progress Progress
	traffic  map[string]optim.Traffic
}

func (l *outerLoop) execute(ctx context.Context) (*Summary, error) {
	run := l.run
	sc := run.Scenario
	n := sc.Clients
	valN, testN := make([]int, n), make([]int, n)
	for i, d := range run.Data {
		valN[i], testN[i] = sizeOf(d.Val), sizeOf(d.Test)
	}
	opts := make([]optim.OuterOptimizer, n)
	for i := range opts {
		opts[i] = l.optimizer()
	}
	sum := &Summary{Name: sc.Name, Seed: sc.Seed, Clients: n, Network: run.Net.Kind,
		Driver: sc.Runtime.Driver, Rounds: sc.SGP.Rounds, Traffic: l.traffic}
	steps := sc.Outer.Steps
	for s := 0; s <= steps; s++ {
		if s > 0 {
			run.restartSGP(!sc.Outer.Restart)
		}
		l.mw.outer = s
		var last Aggregate
		sink := func(ev optim.RoundEvent) error {
			if err := checkStats(ev); err != nil {
				return err
			}
			last = aggregate(ev.Clients, valN, testN)
			l.mw.round(ev, last)
			if l.progress != nil {
				l.progress(ev, last, sc.SGP.Rounds)
			}
			return nil
		}
		tr, err := l.driver.Run(ctx, run.SGPPhase(), sink)
		l.add("sgp", tr)
		if err != nil {
			return nil, err
		}
		rec := OuterRecord{Step: s, Aggregate: last, LambdaNorm: stackedNorm(run.Lambda)}
		if s == 0 {
			sum.Estimates = run.estimateError()
		}
		if sc.Hypergradient.Estimator == "none" || (s == steps && steps > 0) {
			sum.Outer = append(sum.Outer, rec)
			continue
		}
		hs, est, tr, err := runHypergradient(ctx, run, l.driver, l.mw, l.progress)
		l.add("hypergradient", tr)
		if err != nil {
			return nil, err
		}
		sum.Hypergradient = hs
		rec.HypergradientNorm = hs.Norm
		sum.Outer = append(sum.Outer, rec)
		if steps == 0 {
			break // a single estimate, reported but not applied
		}
		beh := make([]optim.Behaviour, n)
		for i := range beh {
			beh[i] = &optim.OuterStep{Lambda: run.Lambda[i], Est: est[i], Opt: opts[i], Step: s}
		}
		if _, err := l.driver.Run(ctx, &optim.Phase{Name: "outer", Rounds: 1, Clients: beh}, nil); err != nil {
			return nil, err
		}
	}
	sum.Final = sum.Outer[len(sum.Outer)-1].Aggregate
	if steps == 0 {
		// No outer loop: Final says it all; best step and λ mean nothing.
		sum.Outer = nil
		return sum, nil
	}
	best := 0
	for k, r := range sum.Outer {
		if r.ValAcc > sum.Outer[best].ValAcc {
			best = k
		}
	}
	b := sum.Outer[best]
	sum.Best = &b
	return sum, nil
}

func (l *outerLoop) add(phase string, tr optim.Traffic) {
	t := l.traffic[phase]
	t.Add(tr)
	l.traffic[phase] = t
}

// optimizer builds one client's λ-optimizer with per-coordinate rates: the
// label part of ensemble-label-weights (λ = [λ^K; λ^C]) uses lr_labels.
func (l *outerLoop) optimizer() optim.OuterOptimizer {
	sc := l.run.Scenario
	dl := l.run.Model.DimLambda()
	lr := make([]float64, dl)
	for k := range lr {
		lr[k] = sc.Outer.LR
		if sc.Model.Head.Name == "ensemble-label-weights" && k >= sc.Model.K {
			lr[k] = sc.Outer.LRLabels
		}
	}
	if sc.Outer.Optimizer == "sgd" {
		return &optim.SGD{LR: lr}
	}
	return &optim.Adam{LR: lr, Beta1: sc.Outer.Beta1, Beta2: sc.Outer.Beta2, Eps: sc.Outer.Eps}
}
