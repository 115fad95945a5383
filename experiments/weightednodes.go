package experiments

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
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
				TuneOuter: 5, TuneOn: "each", Bilevel: "projected", Jobs: 1}
		})
}

// wnMethods are the methods of Table 3, in its order.
var wnMethods = []string{"weighted-nodes", "local-train", "local-svrg", "ditto", "pfedme"}

// wnLabel is the paper's name of each method.
var wnLabel = map[string]string{"weighted-nodes": "Bi-level", "local-train": "Local-train", "local-svrg": "FedAvg", "ditto": "Ditto", "pfedme": "pFedMe"}

// wnPaper is Table 3's F-MNIST column: [setting−1][target][method] (mean, std).
var wnPaper = map[string][4][2]float64{
	"minority/weighted-nodes": {{0.7758, 0.0059}, {0.7754, 0.0082}, {0.7726, 0.0170}, {0.7658, 0.0117}},
	"minority/local-train":    {{0.6926, 0.0175}, {0.6763, 0.0116}, {0.6762, 0.0126}, {0.6809, 0.0079}},
	"minority/local-svrg":     {{0.7507, 0.0097}, {0.5686, 0.0211}, {0.5940, 0.0211}, {0.5648, 0.0481}},
	"minority/ditto":          {{0.7297, 0.0146}, {0.7204, 0.0059}, {0.6856, 0.0247}, {0.6974, 0.0130}},
	"minority/pfedme":         {{0.7418, 0.0235}, {0.7207, 0.0130}, {0.7123, 0.0239}, {0.7035, 0.0187}},
	"majority/weighted-nodes": {{0.8364, 0.0121}, {0.8332, 0.0063}, {0.8234, 0.0119}, {0.8160, 0.0051}},
	"majority/local-train":    {{0.7427, 0.0110}, {0.7343, 0.0104}, {0.7262, 0.0074}, {0.7012, 0.0066}},
	"majority/local-svrg":     {{0.8327, 0.0119}, {0.7824, 0.0062}, {0.7702, 0.0143}, {0.7644, 0.0258}},
	"majority/ditto":          {{0.8086, 0.0141}, {0.7889, 0.0093}, {0.7628, 0.0115}, {0.7646, 0.0085}},
	"majority/pfedme":         {{0.8297, 0.0070}, {0.8091, 0.0044}, {0.7871, 0.0104}, {0.7910, 0.0110}},
}

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
	Jobs         int       `yaml:"jobs" doc:"runs of one setting and target executed at once, 1 … 64 (the results do not depend on it)"`

	// load, when set (tests), replaces reading the Fashion-MNIST files.
	load func() (train, test *models.Dataset, err error)
}

// Validate implements scenarios.Experiment.
func (e *WeightedNodesExp) Validate(sc *scenarios.Scenario) error {
	if _, ok := sc.Data.Source.Params.(*models.NodeShiftData); !ok {
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
		HLR: hlr, Eta: eta, Cap: e.Cap, Method: e.Bilevel}
}

func (e *WeightedNodesExp) ditto(outer int, lr float64, tau int, lambda float64) *fed.Ditto {
	return &fed.Ditto{WeightedCommon: e.common(outer, lr, tau), Lambda: lambda, PersonalSteps: 25}
}

func (e *WeightedNodesExp) pfedme(outer int, lr float64, tau int, lambda float64) *fed.PFedMe {
	return &fed.PFedMe{WeightedCommon: e.common(outer, lr, tau), Lambda: lambda, Beta: 1,
		InnerSteps: e.PFedMeInner, Delta: 0.005, PersonalLR: e.PersonalLR}
}

// Estimate implements scenarios.Experiment: the Fashion-MNIST files, one
// run's data and about eight method-runs' worth of Local-SVRG work per
// seed, setting and target, plus the tuning.
func (e *WeightedNodesExp) Estimate(sc *scenarios.Scenario) scenarios.Resources {
	d, _ := sc.Data.Source.Params.(*models.NodeShiftData)
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
	Seconds float64 `json:"seconds"`
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

// wnEnv runs one algorithm on node-shift data.
type wnEnv struct {
	ctx          context.Context
	sc           scenarios.Scenario
	env          scenarios.Env
	train, test  *models.Dataset
	data         *models.NodeShiftData
	features, cl int
}

func (w *wnEnv) run(alg optim.Algorithm, setting int, target, method string, seed uint64) (*wnRun, error) {
	start := time.Now()
	k := w.sc.Clients
	data, err := models.NodeShift(models.NodeShiftSpec{Nodes: k + 1, Setting: setting, Majority: target == "majority",
		Minority: w.data.Minority, Train: w.data.Train, Val: w.data.Val, Test: w.data.Test}, w.train, w.test, seed)
	if err != nil {
		return nil, err
	}
	nw, err := graph.Build(registry.Choice[graph.Topology]{Name: "star", Params: &graph.Star{Prob: 1}}, k+1, seed)
	if err != nil {
		return nil, err
	}
	arch := w.sc.Model.Arch.Params
	model := w.sc.Model.Head.Params.New(func() models.Classifier { return arch.New(w.features, w.cl) }, w.sc.Model.HeadParams())
	x0 := make([]float64, model.DimX())
	model.Init(x0, rng.New(seed, rng.Global, rng.PurposeInit))
	if err := alg.Validate(k + 1); err != nil {
		return nil, err
	}
	factory, prog, err := alg.Plan(&optim.Setup{Net: nw, Data: data, Model: model, X0: x0, Seed: seed})
	if err != nil {
		return nil, err
	}
	drv, closeDriver, err := w.env.NewDriver(nw, factory)
	if err != nil {
		return nil, err
	}
	defer closeDriver()
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
	if _, err := drv.Execute(w.ctx, prog, &sink); err != nil {
		return nil, err
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

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

func (e *WeightedNodesExp) algorithm(method string, c wnChoice) optim.Algorithm {
	common := e.common(e.Outer, c.LR, c.Tau)
	svrg := nodeweights.SVRGParam{Q: e.Q}
	switch method {
	case "weighted-nodes":
		return e.bilevel(e.Outer, c.LR, c.HLR, c.Eta, c.Tau)
	case "local-train":
		return &nodeweights.LocalTrain{WeightedCommon: common, SVRGParam: svrg}
	case "local-svrg":
		return &nodeweights.LocalSVRG{WeightedCommon: common, SVRGParam: svrg}
	case "ditto":
		return e.ditto(e.Outer, c.LR, c.Tau, c.DittoLambda)
	}
	return e.pfedme(e.Outer, c.LR, c.Tau, c.PFedMeLambda)
}

// Run implements scenarios.Experiment.
func (e *WeightedNodesExp) Run(ctx context.Context, sc scenarios.Scenario, env scenarios.Env) (any, error) {
	start := time.Now()
	d := sc.Data.Source.Params.(*models.NodeShiftData)
	load := models.FashionMNIST(d.Dir).Load
	if e.load != nil {
		load = e.load
	}
	train, test, err := load()
	if err != nil {
		return nil, err
	}
	train.C, test.C = 10, 10
	w := &wnEnv{ctx: ctx, sc: sc, env: env, train: train, test: test, data: d, features: 28 * 28, cl: 10}
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
			// builds its own data, model and driver, so the results do
			// not depend on the order.
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
	sum := e.summarize(runs, choices, d.Minority, time.Since(start).Seconds())
	files := map[string]func() ([]byte, error){
		"table.md":     func() ([]byte, error) { return []byte(sum.Table), nil },
		"runs.csv":     func() ([]byte, error) { return wnRunsCSV(runs), nil },
		"curves.csv":   func() ([]byte, error) { return wnCurvesCSV(runs), nil },
		"weights.csv":  func() ([]byte, error) { return wnWeightsCSV(runs), nil },
		"accuracy.png": func() ([]byte, error) { return wnAccuracyPlot(e, runs) },
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

// WeightedNodesSummary is summary.json of the experiment.
type WeightedNodesSummary struct {
	Chosen  map[string]wnChoice      `json:"chosen"`
	Cells   map[string]wnCell        `json:"cells"` // "S1/minority/weighted-nodes"
	Claims  []string                 `json:"claims"`
	Weights map[string][2]float64    `json:"minority_weight_first_last"` // "S1/minority": Σ minority weights at s = 0 and after the last step (seed mean)
	Seconds float64                  `json:"seconds"`
	Table   string                   `json:"-"`
	Paper   map[string][4][2]float64 `json:"-"`
}

type wnCell struct {
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	N     int     `json:"n"`
	Paper float64 `json:"paper"`
}

func meanStd(v []float64) (float64, float64) {
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	var s float64
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	if len(v) > 1 {
		s /= float64(len(v) - 1)
	}
	return m, math.Sqrt(s)
}

func (e *WeightedNodesExp) summarize(runs []*wnRun, choices map[string]wnChoice, minority int, seconds float64) *WeightedNodesSummary {
	sum := &WeightedNodesSummary{Chosen: choices, Cells: map[string]wnCell{}, Weights: map[string][2]float64{}, Seconds: seconds}
	acc := map[string][]float64{}
	minW := map[string][][2]float64{}
	for _, r := range runs {
		_, t := r.best()
		key := fmt.Sprintf("S%d/%s/%s", r.Setting, r.Target, r.Method)
		acc[key] = append(acc[key], t)
		if len(r.W) > 0 {
			first, last := r.W[0], r.W[len(r.W)-1]
			var a, b float64
			for j := range min(minority, len(first)) { // nodes 1 … minority come first
				a += first[j]
				b += last[j]
			}
			k := fmt.Sprintf("S%d/%s", r.Setting, r.Target)
			minW[k] = append(minW[k], [2]float64{a, b})
		}
	}
	for k, v := range minW {
		var a, b float64
		for _, p := range v {
			a += p[0]
			b += p[1]
		}
		sum.Weights[k] = [2]float64{a / float64(len(v)), b / float64(len(v))}
	}
	var tb strings.Builder
	for _, target := range e.Targets {
		fmt.Fprintf(&tb, "\n**%s model** (test accuracy at the best validation accuracy, mean ± std over %d seeds; paper's F-MNIST CNN in brackets)\n\n", strings.ToUpper(target[:1])+target[1:], e.Seeds)
		tb.WriteString("| method |")
		for _, s := range e.Settings {
			fmt.Fprintf(&tb, " Setting %d |", s)
		}
		tb.WriteString("\n|---|")
		for range e.Settings {
			tb.WriteString("---|")
		}
		tb.WriteString("\n")
		for _, m := range e.Methods {
			fmt.Fprintf(&tb, "| %s |", wnLabel[m])
			for _, s := range e.Settings {
				key := fmt.Sprintf("S%d/%s/%s", s, target, m)
				mean, std := meanStd(acc[key])
				paper := wnPaper[target+"/"+m][s-1][0]
				sum.Cells[key] = wnCell{Mean: mean, Std: std, N: len(acc[key]), Paper: paper}
				fmt.Fprintf(&tb, " %.4f ± %.4f (%.4f) |", mean, std, paper)
			}
			tb.WriteString("\n")
		}
	}
	sum.Table = tb.String()
	sum.Claims = e.claims(sum)
	return sum
}

// claims checks the paper's statements on the measured means.
func (e *WeightedNodesExp) claims(sum *WeightedNodesSummary) []string {
	var out []string
	has := func(m string) bool { return slices.Contains(e.Methods, m) }
	cell := func(s int, t, m string) float64 { return sum.Cells[fmt.Sprintf("S%d/%s/%s", s, t, m)].Mean }
	if has("weighted-nodes") && len(e.Methods) > 1 {
		for _, t := range e.Targets {
			var best []string
			for _, s := range e.Settings {
				top := true
				for _, m := range e.Methods {
					if m != "weighted-nodes" && cell(s, t, m) > cell(s, t, "weighted-nodes") {
						top = false
					}
				}
				if top {
					best = append(best, fmt.Sprint(s))
				}
			}
			out = append(out, fmt.Sprintf("Bi-level has the best mean (%s model) in %d of %d settings: [%s]", t, len(best), len(e.Settings), strings.Join(best, " ")))
		}
	}
	if has("local-svrg") && has("local-train") {
		for _, t := range e.Targets {
			var below []string
			for _, s := range e.Settings {
				if s >= 2 && cell(s, t, "local-svrg") < cell(s, t, "local-train") {
					below = append(below, fmt.Sprint(s))
				}
			}
			out = append(out, fmt.Sprintf("FedAvg below Local-train (%s model) in settings [%s] of 2–4", t, strings.Join(below, " ")))
		}
	}
	if has("weighted-nodes") && len(e.Settings) > 1 {
		for _, t := range e.Targets {
			spread := func(m string) float64 {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, s := range e.Settings {
					lo, hi = min(lo, cell(s, t, m)), max(hi, cell(s, t, m))
				}
				return hi - lo
			}
			line := fmt.Sprintf("spread over settings (%s model): Bi-level %.4f", t, spread("weighted-nodes"))
			for _, m := range e.Methods {
				if m != "weighted-nodes" {
					line += fmt.Sprintf(", %s %.4f", wnLabel[m], spread(m))
				}
			}
			out = append(out, line)
		}
	}
	keys := make([]string, 0, len(sum.Weights))
	for k := range sum.Weights {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := sum.Weights[k]
		out = append(out, fmt.Sprintf("%s: total weight of the minority nodes %.3f → %.3f", k, v[0], v[1]))
	}
	return out
}

func wnRunsCSV(runs []*wnRun) []byte {
	var b bytes.Buffer
	b.WriteString("setting,target,method,seed,best_val_acc,test_acc_at_best,final_test_acc,syncs,bytes,seconds\n")
	for _, r := range runs {
		v, t := r.best()
		fmt.Fprintf(&b, "%d,%s,%s,%d,%s,%s,%s,%s,%d,%.2f\n", r.Setting, r.Target, r.Method, r.Seed, ftoa(v), ftoa(t),
			ftoa(r.Test[len(r.Test)-1]), ftoa(r.Syncs[len(r.Syncs)-1]), r.Bytes[len(r.Bytes)-1], r.Seconds)
	}
	return b.Bytes()
}

func wnCurvesCSV(runs []*wnRun) []byte {
	var b bytes.Buffer
	b.WriteString("setting,target,method,seed,outer,syncs,bytes,val_acc,test_acc\n")
	for _, r := range runs {
		for i := range r.Val {
			fmt.Fprintf(&b, "%d,%s,%s,%d,%d,%s,%d,%s,%s\n", r.Setting, r.Target, r.Method, r.Seed, i, ftoa(r.Syncs[i]), r.Bytes[i], ftoa(r.Val[i]), ftoa(r.Test[i]))
		}
	}
	return b.Bytes()
}

func wnWeightsCSV(runs []*wnRun) []byte {
	var b bytes.Buffer
	b.WriteString("setting,target,seed,outer,node,weight\n")
	for _, r := range runs {
		for s, w := range r.W {
			for k, v := range w {
				fmt.Fprintf(&b, "%d,%s,%d,%d,%d,%s\n", r.Setting, r.Target, r.Seed, s, k+1, ftoa(v))
			}
		}
	}
	return b.Bytes()
}
