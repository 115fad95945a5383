package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"hgpsim/datasets"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fedbio"
	"hgpsim/scenarios"
)

func init() {
	scenarios.Experiments.Register("comm-fedbio",
		"The Comm-FedBiO paper's Sec. 6: test accuracy over rounds of every method at one compression rate (Fig. 1: the three Comm-FedBiO variants, FedAvg on the noisy labels, FedAvg-Oracle and Preprocess with the best of its thresholds), the F1 of mislabel detection (label changed, predicted when λ < 0.5) of each variant against the compression rate (Fig. 2), for each noise setting, and the bytes uploaded per round, measured. Its parameters are comm-fedbio's (the template of every run) and the lists below; data must be noisy-labels. Every run is repeated for each seed and each label flip; claims.csv gives each method's final and best test accuracy, its accuracy at the round where FedAvg of the same seed peaks, and its F1, as mean and 95 % half-width over the seeds. Writes curves.csv, f1.csv, bytes.csv, claims.csv, accuracy.png, f1.png and summary.json, and with noise_stats noise.csv and noise.png (where the λ-weighted objective lies: λ on the noisy and clean samples, the noisy samples' share of the loss and of the gradient norm).",
		func() scenarios.Experiment {
			e := &CommFedBiOExp{Noises: []string{"iid", "non-iid"},
				Methods:          []string{"iter-topk", "iter-sketch", "non-iter", "fedavg", "fedavg-oracle", "preprocess"},
				CurveCompression: 20, Variants: []string{"iter-topk", "iter-sketch", "non-iter"},
				Rates: []float64{10, 20, 100, 1000}, BenchSteps: 200, BenchLR: 0.5, Thresholds: []float64{0.05, 0.1, 0.2, 0.3}}
			alg, _ := optim.Algorithms.Lookup("comm-fedbio")
			e.CommFedBiO = *alg.New().(*fedbio.CommFedBiO)
			return e
		})
}

// CommFedBiOExp runs the comm-fedbio family on derived configurations and
// compares them.
type CommFedBiOExp struct {
	fedbio.CommFedBiO `yaml:",inline"`
	Noises            []string  `yaml:"noises" doc:"noise settings, each a panel: iid and/or non-iid (the data section's rho, rho_min, rho_max apply)"`
	Flips             []string  `yaml:"flips" doc:"label flips, each a panel with every noise setting: uniform and/or pair (see data kind noisy-labels); empty: the data section's flip"`
	Seeds             []uint64  `yaml:"seeds" doc:"seeds of every run (data, initial model, minibatches), at most 100; empty: the scenario's seed. claims.csv gives each number's mean and 95 % Student-t half-width over the seeds"`
	NoiseStats        bool      `yaml:"noise_stats" doc:"record at every evaluation where the λ-weighted training objective lies (noise.csv): mean λ on the noisy and the clean samples, the noisy samples' share of the weighted loss and of the weighted gradient's norm, the cosine between the noisy and the clean gradient, and the F1 so far; costs a pass over the training data per evaluation"`
	Methods           []string  `yaml:"methods" doc:"methods of the accuracy curves: iter, iter-topk, iter-sketch, non-iter, fedavg, fedavg-oracle, preprocess"`
	CurveCompression  float64   `yaml:"curve_compression" doc:"compression rate of the variants in the accuracy curves, >= 1 (the paper: 20)"`
	Variants          []string  `yaml:"variants" doc:"variants of the F1 table: iter-topk, iter-sketch, non-iter"`
	Rates             []float64 `yaml:"rates" doc:"compression rates of the F1 table, each >= 1 (the paper: 10, 20, 100, 1000); a (variant, rate) also in the curves is not run twice"`
	F1Rounds          int       `yaml:"f1_rounds" doc:"rounds of the F1 runs at rates other than curve_compression, 0 (= rounds) … 10⁶"`
	BenchSteps        int       `yaml:"bench_steps" doc:"preprocess: gradient steps of the benchmark model"`
	BenchLR           float64   `yaml:"bench_lr" doc:"preprocess: step size of the benchmark model"`
	Thresholds        []float64 `yaml:"thresholds" doc:"preprocess: filtering thresholds tried; the best final test accuracy is reported (as the paper tunes it)"`
}

var fedBioMethods = []string{"iter", "iter-topk", "iter-sketch", "non-iter", "fedavg", "fedavg-oracle", "preprocess"}

// Validate implements scenarios.Experiment.
func (e *CommFedBiOExp) Validate(sc *scenarios.Scenario) error {
	if _, ok := sc.Data.Source.Params.(*datasets.NoisyLabels); !ok {
		return fmt.Errorf("data: comm-fedbio needs data kind noisy-labels, got %s", sc.Data.Source.Name)
	}
	if err := e.CommFedBiO.Validate(sc.Clients + 1); err != nil {
		return err
	}
	if len(e.Noises) == 0 {
		return fmt.Errorf("noises: list iid and/or non-iid")
	}
	for _, n := range e.Noises {
		if n != "iid" && n != "non-iid" {
			return fmt.Errorf("noises: iid or non-iid, got %q", n)
		}
	}
	for _, f := range e.Flips {
		if f != "uniform" && f != "pair" {
			return fmt.Errorf("flips: uniform or pair, got %q", f)
		}
	}
	if len(e.Seeds) > 100 {
		return fmt.Errorf("seeds: at most 100, got %d", len(e.Seeds))
	}
	for _, m := range e.Methods {
		if !slices.Contains(fedBioMethods, m) {
			return fmt.Errorf("methods: %q is not one of %v", m, fedBioMethods)
		}
	}
	for _, v := range e.Variants {
		if v != "iter-topk" && v != "iter-sketch" && v != "non-iter" && v != "iter" {
			return fmt.Errorf("variants: iter, iter-topk, iter-sketch or non-iter, got %q", v)
		}
	}
	for _, r := range append([]float64{e.CurveCompression}, e.Rates...) {
		if !(r >= 1) || math.IsInf(r, 0) {
			return fmt.Errorf("curve_compression, rates: finite numbers >= 1, got %v", r)
		}
	}
	if e.F1Rounds < 0 || e.F1Rounds > 1_000_000 {
		return fmt.Errorf("f1_rounds must be in [0, 10⁶], got %d", e.F1Rounds)
	}
	if slices.Contains(e.Methods, "preprocess") {
		if len(e.Thresholds) == 0 {
			return fmt.Errorf("thresholds: list at least one for preprocess")
		}
		for _, th := range e.Thresholds {
			p := &fedbio.FedBioPreprocess{FederatedTraining: e.FederatedTraining, BenchSteps: e.BenchSteps, BenchLR: e.BenchLR, Threshold: th}
			if err := p.Validate(sc.Clients + 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// Estimate implements scenarios.Experiment: Fashion-MNIST in memory and a
// forward-backward pass per sample of every local step and HVP.
func (e *CommFedBiOExp) Estimate(sc *scenarios.Scenario) scenarios.Resources {
	f, c := sc.Shape()
	src, _ := sc.Data.Source.Params.(*datasets.NoisyLabels)
	r := scenarios.Resources{Live: []scenarios.ResourcePart{{Name: "data", Bytes: sc.Data.Source.Params.Examples(sc.Clients+1) * datasets.ExampleBytes(sc.Data.Source.Params, f)}}}
	r.PeakBytes = 2 * r.LiveBytes()
	d := float64(f*128 + 128 + 128*c + c)
	perRound := float64(sc.Clients) * (float64(e.LocalSteps*max(e.Batch, 1))*6*d + float64(e.Iterations*max(e.HVPBatch, 1))*12*d)
	if src != nil {
		perRound += float64(sc.Clients*src.Train) * 4 * d
	}
	runs := float64(len(e.seeds(sc)) * len(e.flips(src)) * len(e.Noises) * (len(e.Methods) + len(e.Thresholds) + len(e.Variants)*len(e.Rates)))
	r.Flops = runs * float64(e.Rounds) * perRound
	r.Seconds = r.Flops / scenarios.AssumedFlops
	return r
}

func (e *CommFedBiOExp) seeds(sc *scenarios.Scenario) []uint64 {
	if len(e.Seeds) > 0 {
		return e.Seeds
	}
	return []uint64{sc.Seed}
}

// flips returns the label flips of the panels.
func (e *CommFedBiOExp) flips(src *datasets.NoisyLabels) []string {
	if len(e.Flips) > 0 {
		return e.Flips
	}
	if src == nil || src.Flip == "" {
		return []string{"uniform"}
	}
	return []string{src.Flip}
}

// algorithm returns the algorithm of a method at a compression rate, and
// its registered kind.
func (e *CommFedBiOExp) algorithm(method string, rate, threshold float64, rounds int) (string, optim.Algorithm) {
	a := e.CommFedBiO
	a.Rounds = rounds
	a.Compression = rate
	switch method {
	case "iter":
		a.Hypergradient, a.Compressor = "iterative", "none"
	case "iter-topk":
		a.Hypergradient, a.Compressor = "iterative", "topk"
	case "iter-sketch":
		a.Hypergradient, a.Compressor = "iterative", "sketch"
	case "non-iter":
		a.Hypergradient = "non-iterative"
	case "fedavg":
		a.Hypergradient = "none"
	case "fedavg-oracle":
		return "fedavg-oracle", &fedbio.FedAvgOracle{FederatedTraining: a.FederatedTraining}
	case "preprocess":
		return "fedbio-preprocess", &fedbio.FedBioPreprocess{FederatedTraining: a.FederatedTraining, BenchSteps: e.BenchSteps, BenchLR: e.BenchLR, Threshold: threshold}
	}
	return "comm-fedbio", &a
}

// fedBioSink records the server's evaluations and the phase's results.
type fedBioSink struct {
	run     *fedBioRun
	results []optim.Result
	traffic optim.Traffic
	// With noise_stats: the weighted loss and the clients' data.
	loss  *models.SampleWeighted[float64]
	train []*datasets.Dataset
	noisy [][]bool
}

func (s *fedBioSink) Evaluated(ev *optim.RoundEvent) error {
	if ev.Phase != "comm-fedbio" || len(ev.Clients) == 0 {
		return nil
	}
	per := ev.Rounds / s.run.Rounds
	s.run.CurveAt = append(s.run.CurveAt, (ev.Round+1)/per)
	s.run.Curve = append(s.run.Curve, ev.Clients[0].TestAcc)
	return nil
}

// Finished keeps the results; the training phase is cut at its
// evaluations, so with noise_stats every part's end is a point of the
// record.
func (s *fedBioSink) Finished(rep *optim.PhaseReport) error {
	s.traffic.Add(rep.Traffic)
	if rep.Spec.Name != "comm-fedbio" {
		return nil
	}
	s.results = rep.Results
	if s.loss == nil || len(rep.Results) < 2 {
		return nil
	}
	srv, err := fedbio.ServerResultOf(rep.Results[0])
	if err != nil {
		return err
	}
	clients, err := optim.ResultsOf[fedbio.ClientResult](rep.Results[1:])
	if err != nil {
		return err
	}
	lambda := make([][]float64, len(s.train))
	for i, c := range clients {
		lambda[i+1] = c.Weights
	}
	f1, _, _ := fedbio.F1(clients)
	per := rep.Spec.TotalRounds() / s.run.Rounds
	s.run.NoiseAt = append(s.run.NoiseAt, fedBioNoisePoint{Round: (rep.Spec.Offset + rep.Spec.Rounds) / per, F1: f1,
		NoiseStats: fedbio.MeasureNoise(s.loss, srv.X, s.train, s.noisy, lambda)})
	return nil
}

// one runs a method on the loaded data of a noise setting: the scenario
// with the method's algorithm and those data.
func (e *CommFedBiOExp) one(ctx context.Context, sc scenarios.Scenario, env scenarios.Env, data []datasets.ClientData, p fedBioPanel, method string, rate, threshold float64, rounds int) (*fedBioRun, error) {
	kind, alg := e.algorithm(method, rate, threshold, rounds)
	name := fmt.Sprintf("%s-%s-%s-x%s-th%s-rounds%d-seed%d", p.noise, p.flip, method, strconv.FormatFloat(rate, 'f', -1, 64), strconv.FormatFloat(threshold, 'f', -1, 64), rounds, p.seed)
	d := withData(derive(sc, name, p.seed, kind, alg), data)
	run := &fedBioRun{Seed: p.seed, Noise: p.noise, Flip: p.flip, Method: method, Rounds: rounds, Threshold: threshold}
	if method != "fedavg" && method != "fedavg-oracle" && method != "preprocess" {
		run.Rate = rate
	}
	sink := &fedBioSink{run: run}
	if e.NoiseStats {
		f, c := sc.Shape()
		sink.loss = models.NewSampleWeighted[float64](models.NewClassifier[float64](sc.Model.Arch.Params, f, c))
		sink.train = make([]*datasets.Dataset, len(data))
		sink.noisy = make([][]bool, len(data))
		for i := 1; i < len(data); i++ {
			sink.train[i], sink.noisy[i] = data[i].Train, data[i].Noisy
		}
	}
	if err := execute(ctx, env, d, sink); err != nil {
		return nil, fmt.Errorf("%s (%s, ×%g, seed %d): %w", method, p, rate, p.seed, err)
	}
	if n := len(run.Curve); n > 0 {
		run.FinalAcc = run.Curve[n-1]
		for k, a := range run.Curve {
			if a > run.BestAcc {
				run.BestAcc, run.BestAt = a, run.CurveAt[k]
			}
		}
	}
	if len(sink.results) > 1 {
		clients, err := optim.ResultsOf[fedbio.ClientResult](sink.results[1:])
		if err != nil {
			return nil, err
		}
		run.F1, run.Precision, run.Recall = fedbio.F1(clients)
		srv, err := fedbio.ServerResultOf(sink.results[0])
		if err != nil {
			return nil, err
		}
		run.UpBytes = float64(srv.UploadBytes) / float64(rounds)
		run.HyperBytes = float64(srv.HyperUploadBytes) / float64(rounds)
		run.HyperFloats = float64(srv.HyperMessageFloats)
	}
	run.TotalBytes = float64(sink.traffic.Bytes) / float64(rounds)
	return run, nil
}

// fedBioPanel is one panel of one seed: a noise setting and a flip.
type fedBioPanel struct {
	seed        uint64
	noise, flip string
}

func (p fedBioPanel) String() string { return p.noise + " " + p.flip }

// Run implements scenarios.Experiment.
func (e *CommFedBiOExp) Run(ctx context.Context, sc scenarios.Scenario, env scenarios.Env) (any, error) {
	base := sc.Data.Source.Params.(*datasets.NoisyLabels)
	sum := &CommFedBiOSummary{}
	f1Rounds := e.F1Rounds
	if f1Rounds == 0 {
		f1Rounds = e.Rounds
	}
	seeds, flips := e.seeds(&sc), e.flips(base)
	perNoise := len(e.Methods) + len(e.Variants)*len(e.Rates)
	if slices.Contains(e.Methods, "preprocess") {
		perNoise += len(e.Thresholds) - 1
	}
	total := len(seeds) * len(flips) * len(e.Noises) * perNoise
	step := 0
	progress := func(what string) {
		env.Progress("comm-fedbio/"+what, step, total)
		step++
	}
	for _, seed := range seeds {
		for _, flip := range flips {
			for _, noise := range e.Noises {
				p := fedBioPanel{seed: seed, noise: noise, flip: flip}
				if err := e.panel(ctx, sc, env, base, p, f1Rounds, sum, progress); err != nil {
					return nil, err
				}
			}
		}
	}
	f, c := sc.Shape()
	sum.Dim = models.NewClassifier[float64](sc.Model.Arch.Params, f, c).Dim()
	sum.Claims = e.claims(sum)
	if err := e.write(env, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// panel runs every method and variant of one panel of one seed.
func (e *CommFedBiOExp) panel(ctx context.Context, sc scenarios.Scenario, env scenarios.Env, base *datasets.NoisyLabels, p fedBioPanel, f1Rounds int, sum *CommFedBiOSummary, progress func(string)) error {
	src := *base
	src.Noise, src.Flip = p.noise, p.flip
	data, err := src.Load(sc.Clients+1, p.seed)
	if err != nil {
		return fmt.Errorf("data (%s, seed %d): %w", p, p.seed, err)
	}
	nsc := sc // every run of this panel shares its data
	nsc.Data.Source.Params = &src
	tag := fmt.Sprintf("seed%d/%s/%s", p.seed, p.flip, p.noise)
	var mine []*fedBioRun
	for _, m := range e.Methods {
		if m != "preprocess" {
			progress(tag + "/" + m)
			r, err := e.one(ctx, nsc, env, data, p, m, e.CurveCompression, 0, e.Rounds)
			if err != nil {
				return err
			}
			mine = append(mine, r)
			continue
		}
		var best *fedBioRun
		for _, th := range e.Thresholds {
			progress(fmt.Sprintf("%s/preprocess-%g", tag, th))
			r, err := e.one(ctx, nsc, env, data, p, m, 0, th, e.Rounds)
			if err != nil {
				return err
			}
			if best == nil || r.FinalAcc > best.FinalAcc {
				best = r
			}
		}
		mine = append(mine, best)
	}
	sum.Curves = append(sum.Curves, mine...)
	for _, v := range e.Variants {
		for _, rate := range e.Rates {
			progress(fmt.Sprintf("%s/%s/x%g", tag, v, rate))
			var r *fedBioRun
			for _, c := range mine {
				if c.Method == v && c.Rate == rate && c.Rounds == f1Rounds {
					r = c
				}
			}
			if r == nil {
				var err error
				if r, err = e.one(ctx, nsc, env, data, p, v, rate, 0, f1Rounds); err != nil {
					return err
				}
			}
			sum.F1 = append(sum.F1, r)
		}
	}
	return nil
}
