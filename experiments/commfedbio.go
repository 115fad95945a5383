package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"hgpsim/datasets"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fedbio"
	"hgpsim/report"
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

// fedBioRun is one measured run.
type fedBioRun struct {
	Seed        uint64    `json:"seed"`
	Noise       string    `json:"noise"`
	Flip        string    `json:"flip"`
	Method      string    `json:"method"`
	Rate        float64   `json:"compression,omitempty"`
	Threshold   float64   `json:"threshold,omitempty"`
	Rounds      int       `json:"rounds"`
	Curve       []float64 `json:"-"` // test accuracy at the evaluated rounds
	CurveAt     []int     `json:"-"`
	FinalAcc    float64   `json:"final_test_acc"`
	BestAcc     float64   `json:"best_test_acc"`
	BestAt      int       `json:"best_at_round"`
	F1          float64   `json:"f1"`
	Precision   float64   `json:"precision"`
	Recall      float64   `json:"recall"`
	UpBytes     float64   `json:"upload_bytes_per_round"`
	HyperBytes  float64   `json:"hyper_upload_bytes_per_round"`
	HyperFloats float64   `json:"hyper_message_floats"`
	TotalBytes  float64   `json:"total_bytes_per_round"`
	// Noise holds the NoiseStats at each evaluation (noise_stats), with
	// the round and the F1 so far.
	NoiseAt []fedBioNoisePoint `json:"-"`
}

// fedBioNoisePoint is one evaluation's record of where the weighted
// objective lies.
type fedBioNoisePoint struct {
	Round int
	F1    float64
	fedbio.NoiseStats
}

// fedBioStat is a number's mean and 95 % half-width over N seeds (null
// half-width with one seed; N = 0: not measured).
type fedBioStat struct {
	N    int      `json:"seeds"`
	Mean float64  `json:"mean"`
	Half *float64 `json:"half_width"`
}

func statOf(vs []float64) fedBioStat {
	if len(vs) == 0 {
		return fedBioStat{}
	}
	iv := report.MeanInterval(vs)
	st := fedBioStat{N: iv.N, Mean: iv.Mean}
	if !math.IsNaN(iv.Half) {
		h := iv.Half
		st.Half = &h
	}
	return st
}

// fedBioClaim is one method of one panel over the seeds: the numbers the
// paper's claims are checked on.
type fedBioClaim struct {
	Noise     string     `json:"noise"`
	Flip      string     `json:"flip"`
	Method    string     `json:"method"`
	Rate      float64    `json:"compression,omitempty"`
	Rounds    int        `json:"rounds"`
	Seeds     int        `json:"seeds"`
	Final     fedBioStat `json:"final_test_acc"`
	AtPeak    fedBioStat `json:"test_acc_at_fedavg_peak"` // at the round FedAvg of the same seed peaks
	FedAvgAt  fedBioStat `json:"fedavg_peak_round"`
	Best      fedBioStat `json:"best_test_acc"`
	F1        fedBioStat `json:"f1"`
	Precision fedBioStat `json:"precision"`
	Recall    fedBioStat `json:"recall"`
	// At the last evaluation (noise_stats only).
	LambdaNoisy fedBioStat `json:"lambda_noisy,omitzero"`
	LambdaClean fedBioStat `json:"lambda_clean,omitzero"`
	LossShare   fedBioStat `json:"noisy_loss_share,omitzero"`
	GradShare   fedBioStat `json:"noisy_grad_share,omitzero"`
	Cosine      fedBioStat `json:"noisy_clean_cosine,omitzero"`
}

// CommFedBiOSummary is summary.json.
type CommFedBiOSummary struct {
	Dim    int            `json:"d"`
	Curves []*fedBioRun   `json:"curves"`
	F1     []*fedBioRun   `json:"f1"`
	Claims []*fedBioClaim `json:"claims"`
}

// seeds returns the seeds of the runs.
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
	loss  *models.SampleWeighted
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
		sink.loss = models.NewSampleWeighted(sc.Model.Arch.Params.New(f, c))
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
	sum.Dim = sc.Model.Arch.Params.New(f, c).Dim()
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

// claims aggregates the runs over the seeds: one entry per panel and
// method of the curves (with the accuracy at the round where FedAvg of the
// same seed and panel peaks, when FedAvg is among the methods), then one
// per panel, variant and rate of the F1 table not already among them.
func (e *CommFedBiOExp) claims(sum *CommFedBiOSummary) []*fedBioClaim {
	type key struct {
		noise, flip, method string
		rate                float64
		rounds              int
	}
	peak := map[[2]string]map[uint64]int{} // FedAvg's best round per panel and seed
	for _, r := range sum.Curves {
		if r.Method == "fedavg" {
			k := [2]string{r.Noise, r.Flip}
			if peak[k] == nil {
				peak[k] = map[uint64]int{}
			}
			peak[k][r.Seed] = r.BestAt
		}
	}
	groups := map[key][]*fedBioRun{}
	var order []key
	for _, r := range append(append([]*fedBioRun(nil), sum.Curves...), sum.F1...) {
		k := key{r.Noise, r.Flip, r.Method, r.Rate, r.Rounds}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(groups[k], r) {
			groups[k] = append(groups[k], r)
		}
	}
	var out []*fedBioClaim
	for _, k := range order {
		rs := groups[k]
		pick := func(f func(r *fedBioRun) (float64, bool)) fedBioStat {
			var vs []float64
			for _, r := range rs {
				if v, ok := f(r); ok {
					vs = append(vs, v)
				}
			}
			return statOf(vs)
		}
		always := func(f func(r *fedBioRun) float64) fedBioStat {
			return pick(func(r *fedBioRun) (float64, bool) { return f(r), true })
		}
		c := &fedBioClaim{Noise: k.noise, Flip: k.flip, Method: k.method, Rate: k.rate, Rounds: k.rounds, Seeds: len(rs),
			Final:     always(func(r *fedBioRun) float64 { return r.FinalAcc }),
			Best:      always(func(r *fedBioRun) float64 { return r.BestAcc }),
			F1:        always(func(r *fedBioRun) float64 { return r.F1 }),
			Precision: always(func(r *fedBioRun) float64 { return r.Precision }),
			Recall:    always(func(r *fedBioRun) float64 { return r.Recall }),
		}
		at := peak[[2]string{k.noise, k.flip}]
		c.FedAvgAt = pick(func(r *fedBioRun) (float64, bool) { v, ok := at[r.Seed]; return float64(v), ok })
		c.AtPeak = pick(func(r *fedBioRun) (float64, bool) {
			round, ok := at[r.Seed]
			if !ok {
				return 0, false
			}
			k := slices.Index(r.CurveAt, round)
			if k < 0 {
				return 0, false
			}
			return r.Curve[k], true
		})
		last := func(f func(p fedBioNoisePoint) float64) fedBioStat {
			return pick(func(r *fedBioRun) (float64, bool) {
				if len(r.NoiseAt) == 0 {
					return 0, false
				}
				return f(r.NoiseAt[len(r.NoiseAt)-1]), true
			})
		}
		if len(rs[0].NoiseAt) > 0 {
			c.LambdaNoisy = last(func(p fedBioNoisePoint) float64 { return p.LambdaNoisy })
			c.LambdaClean = last(func(p fedBioNoisePoint) float64 { return p.LambdaClean })
			c.LossShare = last(func(p fedBioNoisePoint) float64 { return p.LossShare })
			c.GradShare = last(func(p fedBioNoisePoint) float64 { return p.GradShare })
			c.Cosine = last(func(p fedBioNoisePoint) float64 { return p.Cosine })
		}
		out = append(out, c)
	}
	return out
}

func (e *CommFedBiOExp) write(env scenarios.Env, sum *CommFedBiOSummary) error {
	ft := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	seed := func(r *fedBioRun) string { return strconv.FormatUint(r.Seed, 10) }
	var curves bytes.Buffer
	w := csv.NewWriter(&curves)
	_ = w.Write([]string{"seed", "noise", "flip", "method", "compression", "threshold", "round", "test_acc"})
	for _, r := range sum.Curves {
		for k, a := range r.Curve {
			_ = w.Write([]string{seed(r), r.Noise, r.Flip, r.Method, ft(r.Rate), ft(r.Threshold), strconv.Itoa(r.CurveAt[k]), ft(a)})
		}
	}
	w.Flush()
	var f1 bytes.Buffer
	w = csv.NewWriter(&f1)
	_ = w.Write([]string{"seed", "noise", "flip", "variant", "compression", "rounds", "f1", "precision", "recall", "final_test_acc", "hyper_message_floats", "hyper_upload_bytes_per_round"})
	for _, r := range sum.F1 {
		_ = w.Write([]string{seed(r), r.Noise, r.Flip, r.Method, ft(r.Rate), strconv.Itoa(r.Rounds), ft(r.F1), ft(r.Precision), ft(r.Recall), ft(r.FinalAcc), ft(r.HyperFloats), ft(r.HyperBytes)})
	}
	w.Flush()
	var by bytes.Buffer
	w = csv.NewWriter(&by)
	_ = w.Write([]string{"seed", "noise", "flip", "method", "compression", "upload_bytes_per_round", "hyper_upload_bytes_per_round", "total_bytes_per_round", "f1", "final_test_acc", "best_test_acc", "best_at_round"})
	for _, r := range append(append([]*fedBioRun(nil), sum.Curves...), sum.F1...) {
		_ = w.Write([]string{seed(r), r.Noise, r.Flip, r.Method, ft(r.Rate), ft(r.UpBytes), ft(r.HyperBytes), ft(r.TotalBytes), ft(r.F1), ft(r.FinalAcc), ft(r.BestAcc), strconv.Itoa(r.BestAt)})
	}
	w.Flush()
	files := map[string][]byte{"curves.csv": curves.Bytes(), "f1.csv": f1.Bytes(), "bytes.csv": by.Bytes(), "claims.csv": claimsCSV(sum.Claims)}
	if e.NoiseStats {
		var ns bytes.Buffer
		w = csv.NewWriter(&ns)
		_ = w.Write([]string{"seed", "noise", "flip", "method", "compression", "rounds", "round", "f1", "lambda_noisy", "lambda_clean", "noisy_loss_share", "noisy_grad_share", "noisy_clean_cosine"})
		seen := map[*fedBioRun]bool{}
		for _, r := range append(append([]*fedBioRun(nil), sum.Curves...), sum.F1...) {
			if seen[r] {
				continue
			}
			seen[r] = true
			for _, q := range r.NoiseAt {
				_ = w.Write([]string{seed(r), r.Noise, r.Flip, r.Method, ft(r.Rate), strconv.Itoa(r.Rounds), strconv.Itoa(q.Round), ft(q.F1),
					ft(q.LambdaNoisy), ft(q.LambdaClean), ft(q.LossShare), ft(q.GradShare), ft(q.Cosine)})
			}
		}
		w.Flush()
		files["noise.csv"] = ns.Bytes()
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := env.WriteFile(name, files[name]); err != nil {
			return err
		}
	}
	if png, err := e.plotCurves(sum); err != nil {
		return err
	} else if err := env.WriteFile("accuracy.png", png); err != nil {
		return err
	}
	if png, err := e.plotF1(sum); err != nil {
		return err
	} else if err := env.WriteFile("f1.png", png); err != nil {
		return err
	}
	if e.NoiseStats {
		if png, err := e.plotNoise(sum); err != nil {
			return err
		} else if err := env.WriteFile("noise.png", png); err != nil {
			return err
		}
	}
	return writeSummary(env, sum)
}

// claimsCSV writes the claims as mean and half-width columns.
func claimsCSV(cs []*fedBioClaim) []byte {
	ft := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{"noise", "flip", "method", "compression", "rounds", "seeds"}
	names := []string{"final_test_acc", "test_acc_at_fedavg_peak", "fedavg_peak_round", "best_test_acc", "f1", "precision", "recall",
		"lambda_noisy", "lambda_clean", "noisy_loss_share", "noisy_grad_share", "noisy_clean_cosine"}
	for _, n := range names {
		head = append(head, n, n+"_half")
	}
	_ = w.Write(head)
	for _, c := range cs {
		row := []string{c.Noise, c.Flip, c.Method, ft(c.Rate), strconv.Itoa(c.Rounds), strconv.Itoa(c.Seeds)}
		for _, st := range []fedBioStat{c.Final, c.AtPeak, c.FedAvgAt, c.Best, c.F1, c.Precision, c.Recall,
			c.LambdaNoisy, c.LambdaClean, c.LossShare, c.GradShare, c.Cosine} {
			half := ""
			if st.Half != nil {
				half = ft(*st.Half)
			}
			mean := ft(st.Mean)
			if st.N == 0 {
				mean = ""
			}
			row = append(row, mean, half)
		}
		_ = w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// Headlines are the console lines of a finished experiment: each method's
// numbers over the seeds.
func (s *CommFedBiOSummary) Headlines() []string {
	pm := func(st fedBioStat) string {
		if st.Half == nil {
			return fmt.Sprintf("%.3f", st.Mean)
		}
		return fmt.Sprintf("%.3f ± %.3f", st.Mean, *st.Half)
	}
	var out []string
	for _, c := range s.Claims {
		line := fmt.Sprintf("%s %s %s", c.Noise, c.Flip, c.Method)
		if c.Rate > 0 {
			line += fmt.Sprintf(" ×%g", c.Rate)
		}
		line += fmt.Sprintf(" (%d rounds, %d seeds): final test accuracy %s, best %s, F1 %s", c.Rounds, c.Seeds, pm(c.Final), pm(c.Best), pm(c.F1))
		if c.AtPeak.N > 0 {
			line += fmt.Sprintf(", at FedAvg's peak (round %.0f) %s", c.FedAvgAt.Mean, pm(c.AtPeak))
		}
		out = append(out, line)
	}
	return out
}
