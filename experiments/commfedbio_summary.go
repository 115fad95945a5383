package experiments

// The comm-fedbio experiment's results: the runs, their statistics over
// the seeds, the claims checked against the paper and the files written.

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"hgpsim/optim/fedbio"
	"hgpsim/report"
	"hgpsim/scenarios"
)

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
