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
	"hgpsim/graph"
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
	Estimates     *EstimateError           `json:"estimates,omitempty"`
	Hypergradient *HypergradientSummary    `json:"hypergradient,omitempty"`
	// Outer lists every outer step (λ⁽ˢ⁾ evaluated after its SGP run);
	// Best is the step with the highest validation accuracy, whose test
	// accuracy is the run's headline (early stopping, as in the paper).
	// Both are omitted for runs without an outer loop (see Headline).
	Outer []OuterRecord `json:"outer,omitempty"`
	Best  *OuterRecord  `json:"best,omitempty"`
	// StoppedEarly is set when outer.patience ended the loop before S.
	StoppedEarly bool `json:"stopped_early,omitempty"`
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

// EstimateError compares the clients' Alg. 2 estimates after the first SGP
// phase with the truth; reported up to exactPBarLimit clients.
type EstimateError struct {
	// PBarMaxAbs is max_ij |p̂_ij − E p_ij| and DeltaBarMaxAbs
	// max_ij |δ̂_{j→i} − δ̄_{j→i}|: against the network's model. They
	// grow when clients do not send as the graph allows (a straggler).
	PBarMaxAbs     float64 `json:"p_bar_max_abs_error"`
	DeltaBarMaxAbs float64 `json:"delta_bar_max_abs_error"`
	// Delivered compares with what the network delivered in the same
	// rounds (the average realized push weight and the delivery frequency
	// per link): the estimation error proper, zero for clients whose
	// bookkeeping matches what they sent.
	Delivered struct {
		PBarMaxAbs     float64 `json:"p_bar_max_abs_error"`
		DeltaBarMaxAbs float64 `json:"delta_bar_max_abs_error"`
	} `json:"delivered"`
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

	driver, closeDriver, err := newDriver(sc.Runtime, run.Net, run.Factory())
	if err != nil {
		return nil, err
	}
	defer closeDriver()
	prog := run.Program()
	sink := newRunSink(run, prog, mw, opt.Progress)
	_, err = driver.Execute(ctx, prog, sink)
	var sum *Summary
	if err == nil {
		sum, err = sink.summary()
	}
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

// exactPBarLimit bounds the client count for which summaries compare the
// Alg. 2 estimates with the truth: the exact p̄ costs O(n³) (18 s at
// n = 1000 on the project machine) and the delivery record O(n²) memory.
const exactPBarLimit = 400

// newDriver returns the driver a scenario asks for, with the clients built
// by factory (inside their actors for the actor runtime), and the function
// that releases it.
func newDriver(rs RuntimeSpec, nw *graph.Network, factory optim.ClientFactory) (optim.Driver, func(), error) {
	if rs.Driver == "sequential" {
		d, err := optim.NewSequential(nw, factory)
		return d, func() {}, err
	}
	rt, err := actors.New(nw, factory, actors.Options{RoundTimeout: rs.RoundTimeout})
	if err != nil {
		return nil, nil, err
	}
	return rt, rt.Close, nil
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

func stackedNorm(v [][]float64) float64 {
	s := 0.0
	for _, x := range v {
		for _, a := range x {
			s += a * a
		}
	}
	return math.Sqrt(s)
}
