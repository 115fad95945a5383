package experiments

import (
	"context"
	"fmt"
	"slices"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/optim"
	"hgpsim/optim/nodeweights"
	"hgpsim/scenarios"
)

// wnRun is what one run measured, per outer iteration.
type wnRun struct {
	Setting int       `json:"setting"`
	Target  string    `json:"target"`
	Method  string    `json:"method"`
	Seed    uint64    `json:"seed"`
	Val     []float64 `json:"-"`
	Test    []float64 `json:"-"`
	Syncs   []float64 `json:"-"`
	Bytes   []int64   `json:"-"`
	W       [][]float64
}

// best is the test accuracy at the first best validation accuracy.
func (r *wnRun) best() (val, test float64) {
	b := 0
	for i, v := range r.Val {
		if v > r.Val[b] {
			b = i
		}
	}
	return r.Val[b], r.Test[b]
}

// wnChoice is the tuned hyper-parameters of one setting and target.
type wnChoice struct {
	LR           float64 `json:"lr"`
	HLR          float64 `json:"h_lr"`
	Tau          int     `json:"tau"`
	Eta          float64 `json:"eta"`
	DittoLambda  float64 `json:"ditto_lambda"`
	PFedMeLambda float64 `json:"pfedme_lambda"`
	TuneVal      float64 `json:"bilevel_tune_val_acc"`
}

// wnEnv derives and runs the training scenarios of the experiment: one
// algorithm on node-shift data drawn from the Fashion-MNIST images read
// once for all runs.
type wnEnv struct {
	ctx         context.Context
	sc          scenarios.Scenario
	env         scenarios.Env
	train, test *datasets.Dataset
	data        *datasets.NodeShiftData
}

// scenario is the training scenario of one run: the algorithm on the
// node-shift data of (setting, target, seed), the center linked to every
// node in every round, as in the paper.
func (w *wnEnv) scenario(alg optim.Algorithm, setting int, target, method string, seed uint64) scenarios.Scenario {
	d := derive(w.sc, fmt.Sprintf("S%d-%s-%s-seed%d", setting, target, method, seed), seed, method, alg)
	d.Network.Topology = registry.Choice[graph.Topology]{Name: "star", Params: &graph.Star{Prob: 1}}
	spec := *w.data
	spec.Setting, spec.Target = setting, target
	d.Data.Source = registry.Choice[datasets.Source]{Name: w.sc.Data.Source.Name,
		Params: &nodeShiftImages{spec: spec, train: w.train, test: w.test}}
	return d
}

func (w *wnEnv) run(alg optim.Algorithm, setting int, target, method string, seed uint64) (*wnRun, error) {
	r := &wnRun{Setting: setting, Target: target, Method: method, Seed: seed}
	var bytesSoFar int64
	sink := wnSink{f: func(rep *optim.PhaseReport) error {
		bytesSoFar += rep.Traffic.Bytes
		st := rep.Last[0]
		r.Val = append(r.Val, st.ValAcc)
		r.Test = append(r.Test, st.TestAcc)
		r.Bytes = append(r.Bytes, bytesSoFar)
		// Every method's center reports a nodeweights.CenterResult (the
		// baselines' with only Syncs).
		res, err := optim.ResultOf[nodeweights.CenterResult](rep.Results[0])
		if err != nil {
			return err
		}
		r.Syncs = append(r.Syncs, float64(res.Syncs))
		if v := res.WUsed; v != nil {
			if len(r.W) == 0 {
				r.W = append(r.W, v)
			}
			r.W = append(r.W, res.W)
		}
		return nil
	}}
	if err := execute(w.ctx, w.env, w.scenario(alg, setting, target, method, seed), &sink); err != nil {
		return nil, err
	}
	return r, nil
}

// wnSink hands every phase report of the center to f.
type wnSink struct {
	optim.NoSink
	f func(*optim.PhaseReport) error
}

func (s *wnSink) Finished(rep *optim.PhaseReport) error {
	if len(rep.Last) == 0 || len(rep.Results) == 0 {
		return fmt.Errorf("phase %s: the center reported nothing", rep.Spec.Name)
	}
	return s.f(rep)
}

// tune picks the bilevel grid point and the baselines' λ with the highest
// validation accuracy after TuneOuter outer iterations on the first seed.
func (e *WeightedNodesExp) tune(w *wnEnv, setting int, target string) (wnChoice, error) {
	seed := w.sc.Seed
	c := wnChoice{TuneVal: -1, LR: e.LR[0], Tau: e.Tau[0], HLR: e.HLR[0], Eta: e.Eta[0],
		DittoLambda: e.DittoLambda[0], PFedMeLambda: e.PFedMeLambda[0]}
	last := func(r *wnRun) float64 { return r.Val[len(r.Val)-1] }
	// A one-point grid needs no tuning run.
	if len(e.LR)*len(e.Tau)*len(e.HLR)*len(e.Eta) > 1 && (slices.Contains(e.Methods, "weighted-nodes") || len(e.LR)*len(e.Tau) > 1) {
		for _, lr := range e.LR {
			for _, tau := range e.Tau {
				for _, hlr := range e.HLR {
					for _, eta := range e.Eta {
						r, err := w.run(e.bilevel(e.TuneOuter, lr, hlr, eta, tau), setting, target, "weighted-nodes", seed)
						if err != nil {
							return c, fmt.Errorf("tuning (lr %v, h_lr %v, tau %d, eta %v): %w", lr, hlr, tau, eta, err)
						}
						if v := last(r); v > c.TuneVal {
							c.TuneVal, c.LR, c.Tau, c.HLR, c.Eta = v, lr, tau, hlr, eta
						}
					}
				}
			}
		}
	}
	pick := func(method string, grid []float64, mk func(l float64) optim.Algorithm) (float64, error) {
		if !slices.Contains(e.Methods, method) || len(grid) == 1 {
			return grid[0], nil
		}
		best, bestVal := grid[0], -1.0
		for _, l := range grid {
			r, err := w.run(mk(l), setting, target, method, seed)
			if err != nil {
				return 0, fmt.Errorf("tuning %s (lambda %v): %w", method, l, err)
			}
			if v := last(r); v > bestVal {
				best, bestVal = l, v
			}
		}
		return best, nil
	}
	var err error
	if c.DittoLambda, err = pick("ditto", e.DittoLambda, func(l float64) optim.Algorithm { return e.ditto(e.TuneOuter, c.LR, c.Tau, l) }); err != nil {
		return c, err
	}
	c.PFedMeLambda, err = pick("pfedme", e.PFedMeLambda, func(l float64) optim.Algorithm { return e.pfedme(e.TuneOuter, c.LR, c.Tau, l) })
	return c, err
}
