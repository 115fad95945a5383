package experiments

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"hgpsim/datasets"
	"hgpsim/optim"
	"hgpsim/optim/fed"
	"hgpsim/optim/nodeweights"
	"hgpsim/scenarios"
)

func init() {
	scenarios.Experiments.Register("weighted-nodes",
		"The weighted-nodes paper's Table 3 (Sec. 5, App. G) on Fashion-MNIST: for each setting (1–4) and target (minority, majority) and seed, the bilevel method (weighted-nodes) and the baselines (local-train, local-svrg = FedAvg, ditto, pfedme) on node-shift data, with the bilevel hyper-parameters and the baselines' λ chosen on a grid by validation accuracy after tune_outer outer iterations; reports the test accuracy at the best validation accuracy (mean ± std over seeds) beside the paper's, accuracy against synchronizations and the node weights. Writes table.md, runs.csv, curves.csv, weights.csv, accuracy.png, weights.png and summary.json.",
		func() scenarios.Experiment {
			return &WeightedNodesExp{Settings: []int{1, 2, 3, 4}, Targets: []string{"minority", "majority"},
				Methods: append([]string(nil), wnMethods...), Seeds: 5, Outer: 20, Epochs: 5, Batch: 50, Q: 0.02, Cap: 1.0 / 3,
				LR: []float64{0.05, 0.02, 0.01}, HLR: []float64{5e-4, 2e-4, 1e-4}, Tau: []int{10, 20}, Eta: []float64{0.025, 0.02, 0.015},
				DittoLambda: []float64{0.05, 0.1, 0.2}, PFedMeLambda: []float64{5, 10, 15}, PFedMeInner: 20, PersonalLR: 0.05,
				TuneOuter: 5, TuneOn: "each", Bilevel: "projected", Output: "last", Jobs: 1}
		})
}

// wnMethods are the methods of Table 3, in its order.
var wnMethods = []string{"weighted-nodes", "local-train", "local-svrg", "ditto", "pfedme"}

// WeightedNodesExp is the Table 3 experiment of the weighted-nodes paper.
type WeightedNodesExp struct {
	Settings     []int     `yaml:"settings" doc:"data settings, each in 1 … 4"`
	Targets      []string  `yaml:"targets" doc:"minority and/or majority: whose distribution p₀ the center's data follows"`
	Methods      []string  `yaml:"methods" doc:"weighted-nodes, local-train, local-svrg, ditto, pfedme (a subset, in any order)"`
	Seeds        int       `yaml:"seeds" doc:"seeds seed … seed + seeds − 1 per setting and target, 1 … 100"`
	Outer        int       `yaml:"outer" doc:"outer iterations (evaluation points) per run, 1 … 10000"`
	Epochs       float64   `yaml:"epochs" doc:"epochs per Local-SVRG call (the paper: 5)"`
	Batch        int       `yaml:"batch" doc:"minibatch size (the paper: 50)"`
	Q            float64   `yaml:"q" doc:"SVRG reference refresh probability (the paper: 1/50)"`
	Cap          float64   `yaml:"cap" doc:"cap b of the weights (the paper: 1/3)"`
	LR           []float64 `yaml:"lr" doc:"grid of the θ-problem step γ (the paper: 0.05, 0.02, 0.01); also the baselines' step"`
	HLR          []float64 `yaml:"h_lr" doc:"grid of the h-problem step (the paper: 5e-4, 2e-4, 1e-4)"`
	Tau          []int     `yaml:"tau" doc:"grid of the local steps τ (the paper: 10, 20); also the baselines'"`
	Eta          []float64 `yaml:"eta" doc:"grid of the outer step η (the paper: 0.025, 0.02, 0.015)"`
	DittoLambda  []float64 `yaml:"ditto_lambda" doc:"grid of Ditto's λ (the paper: 0.05, 0.1, 0.2)"`
	PFedMeLambda []float64 `yaml:"pfedme_lambda" doc:"grid of pFedMe's λ (the paper: 5, 10, 15)"`
	PFedMeInner  int       `yaml:"pfedme_inner" doc:"most gradient steps per pFedMe personal problem (the paper: 20)"`
	PersonalLR   float64   `yaml:"personal_lr" doc:"step of pFedMe's personal problem"`
	TuneOuter    int       `yaml:"tune_outer" doc:"outer iterations of a tuning run (the paper: 5), 1 … outer"`
	TuneOn       string    `yaml:"tune_on" doc:"each (tune per setting and target on the first seed) or first (tune once on the first setting and target, use everywhere)"`
	Bilevel      string    `yaml:"bilevel" doc:"the Bi-level outer loop: projected (Alg. 3, the paper's experiments) or aba (Alg. 2)"`
	Output       string    `yaml:"output" doc:"what Bi-level's Local-SVRG solves return: last (the last averaged iterate) or average (the paper's Alg. 1 line 15; see the weighted-nodes algorithm)"`
	Mu           float64   `yaml:"mu" doc:"μ in the weights of output: average (0: equal weights)"`
	Jobs         int       `yaml:"jobs" doc:"runs of one setting and target executed at once, 1 … 64 (the results do not depend on it)"`

	// load, when set (tests), replaces reading the Fashion-MNIST files.
	load func() (train, test *datasets.Dataset, err error)
}

// Validate implements scenarios.Experiment.
func (e *WeightedNodesExp) Validate(sc *scenarios.Scenario) error {
	if _, ok := sc.Data.Source.Params.(*datasets.NodeShiftData); !ok {
		return fmt.Errorf("data: weighted-nodes takes node-shift data, got %s", sc.Data.Source.Name)
	}
	switch {
	case len(e.Settings) == 0 || len(e.Targets) == 0 || len(e.Methods) == 0:
		return fmt.Errorf("settings, targets, methods: list at least one each")
	case e.Seeds < 1 || e.Seeds > 100:
		return fmt.Errorf("seeds must be in [1, 100], got %d", e.Seeds)
	case e.Outer < 1 || e.Outer > 10_000:
		return fmt.Errorf("outer must be in [1, 10000], got %d", e.Outer)
	case e.TuneOuter < 1 || e.TuneOuter > e.Outer:
		return fmt.Errorf("tune_outer must be in [1, outer = %d], got %d", e.Outer, e.TuneOuter)
	case e.Bilevel != "projected" && e.Bilevel != "aba":
		return fmt.Errorf("bilevel must be projected or aba, got %q", e.Bilevel)
	case e.Jobs < 1 || e.Jobs > 64:
		return fmt.Errorf("jobs must be in [1, 64], got %d", e.Jobs)
	case e.TuneOn != "each" && e.TuneOn != "first":
		return fmt.Errorf("tune_on must be each or first, got %q", e.TuneOn)
	case len(e.LR) == 0 || len(e.HLR) == 0 || len(e.Tau) == 0 || len(e.Eta) == 0 || len(e.DittoLambda) == 0 || len(e.PFedMeLambda) == 0:
		return fmt.Errorf("lr, h_lr, tau, eta, ditto_lambda, pfedme_lambda: every grid needs a value")
	}
	for _, s := range e.Settings {
		if s < 1 || s > 4 {
			return fmt.Errorf("settings: %d is not in 1 … 4", s)
		}
	}
	for _, t := range e.Targets {
		if t != "minority" && t != "majority" {
			return fmt.Errorf("targets: %q is neither minority nor majority", t)
		}
	}
	for _, m := range e.Methods {
		if !slices.Contains(wnMethods, m) {
			return fmt.Errorf("methods: %q is not one of %v", m, wnMethods)
		}
	}
	// Every point of the grids must be a valid algorithm.
	n := sc.Clients + 1
	for _, lr := range e.LR {
		for _, tau := range e.Tau {
			for _, hlr := range e.HLR {
				for _, eta := range e.Eta {
					if err := e.bilevel(e.Outer, lr, hlr, eta, tau).Validate(n); err != nil {
						return fmt.Errorf("grid (lr %v, h_lr %v, tau %d, eta %v): %w", lr, hlr, tau, eta, err)
					}
				}
			}
			for _, l := range e.DittoLambda {
				if err := e.ditto(e.Outer, lr, tau, l).Validate(n); err != nil {
					return fmt.Errorf("ditto (lambda %v): %w", l, err)
				}
			}
			for _, l := range e.PFedMeLambda {
				if err := e.pfedme(e.Outer, lr, tau, l).Validate(n); err != nil {
					return fmt.Errorf("pfedme (lambda %v): %w", l, err)
				}
			}
		}
	}
	return nil
}

func (e *WeightedNodesExp) common(outer int, lr float64, tau int) fed.WeightedCommon {
	return fed.WeightedCommon{Outer: outer, Epochs: e.Epochs, Tau: tau, LR: lr, Batch: e.Batch}
}

func (e *WeightedNodesExp) bilevel(outer int, lr, hlr, eta float64, tau int) *nodeweights.WeightedNodes {
	return &nodeweights.WeightedNodes{WeightedCommon: e.common(outer, lr, tau), SVRGParam: nodeweights.SVRGParam{Q: e.Q},
		HLR: hlr, Eta: eta, Cap: e.Cap, Method: e.Bilevel, Output: e.Output, Mu: e.Mu}
}

func (e *WeightedNodesExp) ditto(outer int, lr float64, tau int, lambda float64) *fed.Ditto {
	return &fed.Ditto{Baseline: fed.Baseline{WeightedCommon: e.common(outer, lr, tau)}, Lambda: lambda, PersonalSteps: 25}
}

func (e *WeightedNodesExp) pfedme(outer int, lr float64, tau int, lambda float64) *fed.PFedMe {
	return &fed.PFedMe{Baseline: fed.Baseline{WeightedCommon: e.common(outer, lr, tau)}, Lambda: lambda, Beta: 1,
		InnerSteps: e.PFedMeInner, Delta: 0.005, PersonalLR: e.PersonalLR}
}

// Estimate implements scenarios.Experiment: the Fashion-MNIST files, one
// run's data and about eight method-runs' worth of Local-SVRG work per
// seed, setting and target, plus the tuning.
func (e *WeightedNodesExp) Estimate(sc *scenarios.Scenario) scenarios.Resources {
	d, _ := sc.Data.Source.Params.(*datasets.NodeShiftData)
	k := float64(sc.Clients)
	var ntrain float64 = 4000
	if d != nil {
		ntrain = float64(d.Train)
	}
	r := scenarios.Resources{Live: []scenarios.ResourcePart{{Name: "Fashion-MNIST", Bytes: 70000 * 785 * 8},
		{Name: "node data", Bytes: int64(k * ntrain * 785 * 8)}}}
	r.PeakBytes = 2 * r.LiveBytes()
	perOuter := 2 * e.Epochs * 2.4 * k * ntrain * 4 * 7850 // two solves, SVRG overhead, 4 flops per weight
	runs := float64(len(e.Settings)*len(e.Targets)) * (float64(e.Seeds)*8 + float64(len(e.LR)*len(e.HLR)*len(e.Tau)*len(e.Eta))*float64(e.TuneOuter)/float64(e.Outer))
	r.Flops = runs * float64(e.Outer) * perOuter
	r.Seconds = r.Flops / scenarios.AssumedFlops
	return r
}

func (e *WeightedNodesExp) algorithm(method string, c wnChoice) optim.Algorithm {
	common := e.common(e.Outer, c.LR, c.Tau)
	svrg := nodeweights.SVRGParam{Q: e.Q}
	switch method {
	case "weighted-nodes":
		return e.bilevel(e.Outer, c.LR, c.HLR, c.Eta, c.Tau)
	case "local-train":
		return &nodeweights.LocalTrain{Baseline: fed.Baseline{WeightedCommon: common}, SVRGParam: svrg}
	case "local-svrg":
		return &nodeweights.LocalSVRG{Baseline: fed.Baseline{WeightedCommon: common}, SVRGParam: svrg}
	case "ditto":
		return e.ditto(e.Outer, c.LR, c.Tau, c.DittoLambda)
	}
	return e.pfedme(e.Outer, c.LR, c.Tau, c.PFedMeLambda)
}

// Run implements scenarios.Experiment.
func (e *WeightedNodesExp) Run(ctx context.Context, sc scenarios.Scenario, env scenarios.Env) (any, error) {
	paper, err := readWNPaper()
	if err != nil {
		return nil, err
	}
	d := sc.Data.Source.Params.(*datasets.NodeShiftData)
	load := datasets.FashionMNIST(d.Dir).Load
	if e.load != nil {
		load = e.load
	}
	train, test, err := load()
	if err != nil {
		return nil, err
	}
	train.C, test.C = 10, 10
	w := &wnEnv{ctx: ctx, sc: sc, env: env, train: train, test: test, data: d}
	choices := map[string]wnChoice{}
	var runs []*wnRun
	total := len(e.Settings) * len(e.Targets) * e.Seeds * len(e.Methods)
	done := 0
	var first *wnChoice
	for _, setting := range e.Settings {
		for _, target := range e.Targets {
			key := fmt.Sprintf("S%d/%s", setting, target)
			var c wnChoice
			if first != nil && e.TuneOn == "first" {
				c = *first
			} else {
				if c, err = e.tune(w, setting, target); err != nil {
					return nil, fmt.Errorf("%s: %w", key, err)
				}
				first = &c
			}
			choices[key] = c
			// The runs of one setting and target, jobs at a time; each
			// is its own scenario, built with its own data, model and
			// driver, so the results do not depend on the order.
			type job struct {
				seed   uint64
				method string
			}
			var jobs []job
			for s := range e.Seeds {
				for _, m := range e.Methods {
					jobs = append(jobs, job{sc.Seed + uint64(s), m})
				}
			}
			out := make([]*wnRun, len(jobs))
			errs := make([]error, len(jobs))
			next := make(chan int)
			finished := make(chan int)
			var wg sync.WaitGroup
			for range min(e.Jobs, len(jobs)) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						if err := ctx.Err(); err != nil {
							errs[i] = err
						} else {
							out[i], errs[i] = w.run(e.algorithm(jobs[i].method, c), setting, target, jobs[i].method, jobs[i].seed)
						}
						finished <- i
					}
				}()
			}
			go func() {
				for i := range jobs {
					next <- i
				}
				close(next)
				wg.Wait()
				close(finished)
			}()
			for range finished {
				env.Progress("weighted-nodes", done, total)
				done++
			}
			for i, j := range jobs {
				if errs[i] != nil {
					return nil, fmt.Errorf("%s, %s, seed %d: %w", key, j.method, j.seed, errs[i])
				}
				runs = append(runs, out[i])
			}
		}
	}
	sum := e.summarize(paper, runs, choices, d.Minority)
	files := map[string]func() ([]byte, error){
		"table.md":     func() ([]byte, error) { return []byte(sum.Table), nil },
		"runs.csv":     func() ([]byte, error) { return wnRunsCSV(runs), nil },
		"curves.csv":   func() ([]byte, error) { return wnCurvesCSV(runs), nil },
		"weights.csv":  func() ([]byte, error) { return wnWeightsCSV(runs), nil },
		"accuracy.png": func() ([]byte, error) { return wnAccuracyPlot(e, paper, runs) },
		"weights.png":  func() ([]byte, error) { return wnWeightsPlot(e, runs, d.Minority) },
	}
	for _, name := range []string{"table.md", "runs.csv", "curves.csv", "weights.csv", "accuracy.png", "weights.png"} {
		b, err := files[name]()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := env.WriteFile(name, b); err != nil {
			return nil, err
		}
	}
	if err := writeSummary(env, sum); err != nil {
		return nil, err
	}
	return sum, nil
}
