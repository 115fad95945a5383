package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"

	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fedbio"
	"hgpsim/scenarios"
)

func init() {
	scenarios.Experiments.Register("comm-fedbio",
		"The Comm-FedBiO paper's Sec. 6: test accuracy over rounds of every method at one compression rate (Fig. 1: the three Comm-FedBiO variants, FedAvg on the noisy labels, FedAvg-Oracle and Preprocess with the best of its thresholds), the F1 of mislabel detection (label changed, predicted when λ < 0.5) of each variant against the compression rate (Fig. 2), for each noise setting, and the bytes uploaded per round, measured. Its parameters are comm-fedbio's (the template of every run) and the lists below; data must be noisy-labels. Writes curves.csv, f1.csv, bytes.csv, accuracy.png, f1.png and summary.json.",
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
	if _, ok := sc.Data.Source.Params.(*models.NoisyLabels); !ok {
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
	src, _ := sc.Data.Source.Params.(*models.NoisyLabels)
	r := scenarios.Resources{Live: []scenarios.ResourcePart{{Name: "data", Bytes: sc.Data.Source.Params.Examples(sc.Clients+1) * models.ExampleBytes(sc.Data.Source.Params, f)}}}
	r.PeakBytes = 2 * r.LiveBytes()
	d := float64(f*128 + 128 + 128*c + c)
	perRound := float64(sc.Clients) * (float64(e.LocalSteps*max(e.Batch, 1))*6*d + float64(e.Iterations*max(e.HVPBatch, 1))*12*d)
	if src != nil {
		perRound += float64(sc.Clients*src.Train) * 4 * d
	}
	runs := float64(len(e.Noises) * (len(e.Methods) + len(e.Thresholds) + len(e.Variants)*len(e.Rates)))
	r.Flops = runs * float64(e.Rounds) * perRound
	r.Seconds = r.Flops / scenarios.AssumedFlops
	return r
}

// fedBioRun is one measured run.
type fedBioRun struct {
	Noise       string    `json:"noise"`
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
	Seconds     float64   `json:"-"`
}

// CommFedBiOSummary is summary.json.
type CommFedBiOSummary struct {
	Dim    int          `json:"d"`
	Curves []*fedBioRun `json:"curves"`
	F1     []*fedBioRun `json:"f1"`
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

func (s *fedBioSink) Finished(rep *optim.PhaseReport) error {
	s.traffic.Add(rep.Traffic)
	if rep.Spec.Name == "comm-fedbio" {
		s.results = rep.Results
	}
	return nil
}

// one runs a method on the loaded data of a noise setting: the scenario
// with the method's algorithm and those data.
func (e *CommFedBiOExp) one(ctx context.Context, sc scenarios.Scenario, env scenarios.Env, data []models.ClientData, noise, method string, rate, threshold float64, rounds int) (*fedBioRun, error) {
	kind, alg := e.algorithm(method, rate, threshold, rounds)
	name := fmt.Sprintf("%s-%s-x%s-th%s-rounds%d", noise, method, strconv.FormatFloat(rate, 'f', -1, 64), strconv.FormatFloat(threshold, 'f', -1, 64), rounds)
	d := withData(derive(sc, name, sc.Seed, kind, alg), data)
	run := &fedBioRun{Noise: noise, Method: method, Rounds: rounds, Threshold: threshold}
	if method != "fedavg" && method != "fedavg-oracle" && method != "preprocess" {
		run.Rate = rate
	}
	sink := &fedBioSink{run: run}
	if err := execute(ctx, env, d, sink); err != nil {
		return nil, fmt.Errorf("%s (%s, ×%g): %w", method, noise, rate, err)
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

// Run implements scenarios.Experiment.
func (e *CommFedBiOExp) Run(ctx context.Context, sc scenarios.Scenario, env scenarios.Env) (any, error) {
	base := sc.Data.Source.Params.(*models.NoisyLabels)
	sum := &CommFedBiOSummary{}
	f1Rounds := e.F1Rounds
	if f1Rounds == 0 {
		f1Rounds = e.Rounds
	}
	perNoise := len(e.Methods) + len(e.Variants)*len(e.Rates)
	if slices.Contains(e.Methods, "preprocess") {
		perNoise += len(e.Thresholds) - 1
	}
	total := len(e.Noises) * perNoise
	step := 0
	progress := func(what string) {
		env.Progress("comm-fedbio/"+what, step, total)
		step++
	}
	for _, noise := range e.Noises {
		src := *base
		src.Noise = noise
		data, err := src.Load(sc.Clients+1, sc.Seed)
		if err != nil {
			return nil, fmt.Errorf("data (%s): %w", noise, err)
		}
		nsc := sc // every run of this noise setting shares its data
		nsc.Data.Source.Params = &src
		for _, m := range e.Methods {
			if m != "preprocess" {
				progress(noise + "/" + m)
				r, err := e.one(ctx, nsc, env, data, noise, m, e.CurveCompression, 0, e.Rounds)
				if err != nil {
					return nil, err
				}
				sum.Curves = append(sum.Curves, r)
				continue
			}
			var best *fedBioRun
			for _, th := range e.Thresholds {
				progress(fmt.Sprintf("%s/preprocess-%g", noise, th))
				r, err := e.one(ctx, nsc, env, data, noise, m, 0, th, e.Rounds)
				if err != nil {
					return nil, err
				}
				if best == nil || r.FinalAcc > best.FinalAcc {
					best = r
				}
			}
			sum.Curves = append(sum.Curves, best)
		}
		for _, v := range e.Variants {
			for _, rate := range e.Rates {
				progress(fmt.Sprintf("%s/%s/x%g", noise, v, rate))
				var r *fedBioRun
				for _, c := range sum.Curves {
					if c.Noise == noise && c.Method == v && c.Rate == rate && c.Rounds == f1Rounds {
						r = c
					}
				}
				if r == nil {
					var err error
					if r, err = e.one(ctx, nsc, env, data, noise, v, rate, 0, f1Rounds); err != nil {
						return nil, err
					}
				}
				sum.F1 = append(sum.F1, r)
			}
		}
		if sum.Dim == 0 {
			f, c := sc.Shape()
			sum.Dim = sc.Model.Arch.Params.New(f, c).Dim()
		}
	}
	if err := e.write(env, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

func (e *CommFedBiOExp) write(env scenarios.Env, sum *CommFedBiOSummary) error {
	ft := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	var curves bytes.Buffer
	w := csv.NewWriter(&curves)
	_ = w.Write([]string{"noise", "method", "compression", "threshold", "round", "test_acc"})
	for _, r := range sum.Curves {
		for k, a := range r.Curve {
			_ = w.Write([]string{r.Noise, r.Method, ft(r.Rate), ft(r.Threshold), strconv.Itoa(r.CurveAt[k]), ft(a)})
		}
	}
	w.Flush()
	var f1 bytes.Buffer
	w = csv.NewWriter(&f1)
	_ = w.Write([]string{"noise", "variant", "compression", "rounds", "f1", "precision", "recall", "final_test_acc", "hyper_message_floats", "hyper_upload_bytes_per_round"})
	for _, r := range sum.F1 {
		_ = w.Write([]string{r.Noise, r.Method, ft(r.Rate), strconv.Itoa(r.Rounds), ft(r.F1), ft(r.Precision), ft(r.Recall), ft(r.FinalAcc), ft(r.HyperFloats), ft(r.HyperBytes)})
	}
	w.Flush()
	var by bytes.Buffer
	w = csv.NewWriter(&by)
	_ = w.Write([]string{"noise", "method", "compression", "upload_bytes_per_round", "hyper_upload_bytes_per_round", "total_bytes_per_round", "f1", "final_test_acc", "best_test_acc", "best_at_round"})
	for _, r := range append(append([]*fedBioRun(nil), sum.Curves...), sum.F1...) {
		_ = w.Write([]string{r.Noise, r.Method, ft(r.Rate), ft(r.UpBytes), ft(r.HyperBytes), ft(r.TotalBytes), ft(r.F1), ft(r.FinalAcc), ft(r.BestAcc), strconv.Itoa(r.BestAt)})
	}
	w.Flush()
	for name, b := range map[string][]byte{"curves.csv": curves.Bytes(), "f1.csv": f1.Bytes(), "bytes.csv": by.Bytes()} {
		if err := env.WriteFile(name, b); err != nil {
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
	return writeSummary(env, sum)
}

// Headlines are the console lines of a finished experiment.
func (s *CommFedBiOSummary) Headlines() []string {
	var out []string
	for _, r := range s.Curves {
		out = append(out, fmt.Sprintf("%s %s: final test accuracy %.3f (best %.3f at round %d), F1 %.3f, %.0f bytes uploaded per round",
			r.Noise, r.Method, r.FinalAcc, r.BestAcc, r.BestAt, r.F1, r.UpBytes))
	}
	for _, r := range s.F1 {
		out = append(out, fmt.Sprintf("%s %s ×%g: F1 %.3f (%.0f numbers per hyper upload)", r.Noise, r.Method, r.Rate, r.F1, r.HyperFloats))
	}
	return out
}
