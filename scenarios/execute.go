package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"hgpsim/actors"
	"hgpsim/models"
	"hgpsim/optim"
)

// Summary is the headline of a run, written to summary.json.
type Summary struct {
	Name          string                   `json:"name"`
	Seed          uint64                   `json:"seed"`
	Clients       int                      `json:"clients"`
	Network       string                   `json:"network"`
	Driver        string                   `json:"driver"`
	Rounds        int                      `json:"sgp_rounds"`
	Final         Aggregate                `json:"final"`
	Traffic       map[string]optim.Traffic `json:"traffic"`
	Estimates     EstimateError            `json:"estimates"`
	Hypergradient *HypergradientSummary    `json:"hypergradient,omitempty"`
	// Outer lists every outer step (λ⁽ˢ⁾ evaluated after its SGP run);
	// Best is the step with the highest validation accuracy, whose test
	// accuracy is the run's headline (early stopping, as in the paper).
	// Both are omitted for runs without an outer loop (see Headline).
	Outer []OuterRecord `json:"outer,omitempty"`
	Best  *OuterRecord  `json:"best,omitempty"`
	// HGPError is set instead of the fields above for an hgp_error run.
	HGPError *HGPErrorSummary `json:"hgp_error,omitempty"`
}

// Headline is the evaluation a run is judged by: the best outer step, or
// the final evaluation of a run without an outer loop.
func (s *Summary) Headline() OuterRecord {
	if s.Best != nil {
		return *s.Best
	}
	return OuterRecord{Aggregate: s.Final}
}

// EstimateError compares the clients' Alg. 2 estimates with the truth.
type EstimateError struct {
	// PBarMaxAbs is max_ij |p̂_ij − E p_ij|; omitted above exactPBarLimit
	// clients, where the exact expectation (O(n³)) costs more than the run.
	PBarMaxAbs     *float64 `json:"p_bar_max_abs_error,omitempty"`
	DeltaBarMaxAbs float64  `json:"delta_bar_max_abs_error"` // max_ij |δ̂_{j→i} − δ̄_{j→i}|
}

// Progress is told about every evaluated round.
type Progress func(ev optim.RoundEvent, agg Aggregate, totalRounds int)

// Options are the knobs of Execute that are not part of the scenario.
type Options struct {
	OutDir   string   // created if missing; existing output files are replaced
	Progress Progress // may be nil
	// MaxMemory is the limit on the estimated peak memory (see
	// CheckOptions); 0 means the machine's memory, negative no limit.
	MaxMemory int64
}

// Execute builds and runs a scenario and writes scenario.yaml,
// metrics.jsonl and summary.json under opt.OutDir. summary.json is written
// last and atomically, so its presence means the run completed.
func Execute(ctx context.Context, sc Scenario, opt Options) (*Summary, error) {
	if _, err := Check("scenario", sc, CheckOptions{MaxMemory: opt.MaxMemory}); err != nil {
		return nil, err
	}
	run, err := Build(sc)
	if err != nil {
		return nil, err
	}
	sc = run.Scenario // resolved: method presets applied
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating output folder: %w", err)
	}
	resolved, err := Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("rendering scenario: %w", err)
	}
	if err := writeAtomic(filepath.Join(opt.OutDir, "scenario.yaml"), resolved); err != nil {
		return nil, err
	}
	// A stale summary from an earlier run in the same folder must not
	// survive a run that fails.
	_ = os.Remove(filepath.Join(opt.OutDir, "summary.json"))
	if sc.HGPError != nil {
		hs, err := executeHGPError(ctx, sc, opt)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", sc.Name, err)
		}
		return &Summary{Name: sc.Name, Seed: sc.Seed, Clients: sc.Clients, HGPError: hs}, nil
	}

	f, err := os.Create(filepath.Join(opt.OutDir, "metrics.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("creating metrics file: %w", err)
	}
	defer f.Close()
	mw := newMetricsWriter(f)

	var driver optim.Driver
	switch sc.Runtime.Driver {
	case "sequential":
		driver = optim.NewSequential(run.Net)
	default:
		rt := actors.New(run.Net, actors.Options{RoundTimeout: sc.Runtime.RoundTimeout})
		defer rt.Close()
		driver = rt
	}
	loop := &outerLoop{run: run, driver: driver, mw: mw, progress: opt.Progress,
		traffic: map[string]optim.Traffic{}}
	sum, err := loop.execute(ctx)
	if cerr := f.Close(); err == nil && (mw.err != nil || cerr != nil) {
		err = fmt.Errorf("writing metrics: %w", firstErr(mw.err, cerr))
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding summary: %w", err)
	}
	if err := writeAtomic(filepath.Join(opt.OutDir, "summary.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	return sum, nil
}

// exactPBarLimit bounds the client count for which summaries compare p̂
// with the exact p̄ (18 s at n = 1000 on the project machine).
const exactPBarLimit = 400

func (r *Run) estimateError() EstimateError {
	var pTrue [][]float64
	var e EstimateError
	if r.Net.N <= exactPBarLimit {
		pTrue = r.expectedPushWeights()
		e.PBarMaxAbs = new(float64)
	}
	for i, c := range r.SGP {
		pBar, deltaBar := c.Estimates()
		for j := range pBar {
			if pTrue != nil {
				*e.PBarMaxAbs = math.Max(*e.PBarMaxAbs, math.Abs(pBar[j]-pTrue[i][j]))
			}
			// deltaBar[j] estimates δ̄_{j→i}.
			e.DeltaBarMaxAbs = math.Max(e.DeltaBarMaxAbs, math.Abs(deltaBar[j]-r.Net.Prob[j][i]))
		}
	}
	return e
}

// DefaultOutDir is runs/<name>-<timestamp>.
func DefaultOutDir(name string, now time.Time) string {
	return filepath.Join("runs", name+"-"+now.Format("20060102-150405"))
}

// writeAtomic writes b to path through a temporary file and a rename, so a
// reader sees either the old file or the whole new one.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := tmp.Write(b)
	// CreateTemp makes the file 0600; outputs are meant to be shared.
	perr := tmp.Chmod(0o644)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := firstErr(werr, perr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func sizeOf(d *models.Dataset) int {
	if d == nil {
		return 0
	}
	return d.N
}

// HypergradientSummary reports the hyper-gradient phase.
type HypergradientSummary struct {
	Estimator string  `json:"estimator"`
	Rounds    int     `json:"rounds"`
	LR        float64 `json:"linearized_lr"` // step of the linearized SGP map
	Norm      float64 `json:"norm"`          // ‖d̂_λ F̄‖ stacked over clients
	// OracleRelError is ‖d̂ − B̄(I−Ā)⁻¹c^y − c^λ‖ / ‖oracle‖ with the oracle
	// linearized at the same state and the true p̄; set when oracle: true.
	OracleRelError *float64 `json:"oracle_rel_error,omitempty"`
}

// runHypergradient runs the estimator phase through the same driver and
// returns the estimators with a summary.
func runHypergradient(ctx context.Context, run *Run, driver optim.Driver, mw *metricsWriter, progress Progress) (*HypergradientSummary, []optim.HyperEstimator, optim.Traffic, error) {
	sc := run.Scenario
	h := sc.Hypergradient
	lr := h.LR
	if lr == 0 {
		lr = sc.SGP.LR.schedule().At(sc.SGP.Rounds - 1)
	}
	phase, est, lins := run.HypergradientPhase(lr)
	sink := func(ev optim.RoundEvent) error {
		if err := checkStats(ev); err != nil {
			return err
		}
		mw.hyper(ev)
		if progress != nil {
			progress(ev, Aggregate{}, phase.Rounds)
		}
		return nil
	}
	traffic, err := driver.Run(ctx, phase, sink)
	if err != nil {
		return nil, nil, traffic, err
	}
	got := make([][]float64, len(est))
	for i, e := range est {
		got[i] = e.Estimate()
	}
	sum := &HypergradientSummary{Estimator: h.Estimator, Rounds: phase.Rounds, LR: lr, Norm: stackedNorm(got)}
	if h.Oracle {
		truth := make([]optim.Linearization, len(lins))
		pTrue := run.expectedPushWeights()
		for i, l := range lins {
			l.PBar = pTrue[i]
			truth[i] = l
		}
		oracle, err := optim.FixedPointOracle(truth)
		if err != nil {
			return nil, nil, traffic, err
		}
		for i := range got {
			for k := range got[i] {
				got[i][k] -= oracle[i][k]
			}
		}
		e := stackedNorm(got) / stackedNorm(oracle)
		sum.OracleRelError = &e
	}
	return sum, est, traffic, nil
}

func stackedNorm(v [][]float64) float64 {
	s := 0.0
	for _, x := range v {
		for _, a := range x {
			s += a * a
		}
	}
	return math.Sqrt(s)
}
