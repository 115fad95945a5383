package run

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"hgpsim/actors"
	"hgpsim/graph"
	"hgpsim/internal/fsutil"
	"hgpsim/optim"
	"hgpsim/scenarios"

	"gonum.org/v1/gonum/floats"
)

// Summary is the headline of a run, written to summary.json.
type Summary struct {
	Name          string                   `json:"name"`
	Seed          uint64                   `json:"seed"`
	Clients       int                      `json:"clients"`
	Network       string                   `json:"network"`
	Driver        string                   `json:"driver"`
	Algorithm     string                   `json:"algorithm"`
	Rounds        int                      `json:"sgp_rounds,omitempty"`
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
	// Blowups lists the phases in which a value blew up (BlowupGrowth):
	// a run that diverged says so whatever its headline accuracy.
	Blowups []Blowup `json:"blowups,omitempty"`
	// Experiment is an experiment's own summary, set instead of the fields
	// above (the experiment writes summary.json itself).
	Experiment any `json:"-"`
	// Evals lists every evaluation of a training phase (in metrics.jsonl
	// too), for callers that compare runs.
	Evals []scenarios.Eval `json:"-"`
	// Wire is what crossed between the supervisor and its worker
	// processes (runtime.workers), in protobuf bytes; omitted in one
	// process.
	Wire *actors.WireTraffic `json:"wire,omitempty"`
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
// phase with the truth; reported up to pdbo.ExactEstimateLimit clients.
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
	// scenarios.CheckOptions); 0 means the machine's memory, negative no limit.
	MaxMemory int64
	// Warn, when not nil, is told what the user should know about a run
	// that completed (e.g. that it could not be checkpointed).
	Warn func(string)
	// Checkpointed, when not nil, is told of every checkpoint written.
	Checkpointed func(CheckpointInfo)
	// RecordLinks, when not empty, is the file (*.csv.gz or *.jsonl.gz)
	// that receives the links realized in every round of the run, written
	// whole when the run completes; links.png in OutDir shows them.
	RecordLinks string
	// WorkerSecurity is the transport to the workers, when the scenario
	// has any: their shared secret and TLS. It is not part of the
	// scenario, which the workers are sent.
	WorkerSecurity actors.Security
}

// CheckpointInfo describes a checkpoint just written.
type CheckpointInfo struct {
	NextStep int           // the outer step the run continues with
	Path     string        // checkpoint.bin
	Bytes    int64         // its size
	Took     time.Duration // to gather the states and write the file
}

// Execute builds and runs a scenario and writes scenario.yaml,
// metrics.jsonl and summary.json under opt.OutDir. summary.json is written
// last and atomically, so its presence means the run completed. A run
// that fails once running returns, with its error, a summary holding only
// the evaluations made before the failure (Evals); other errors return
// no summary.
func Execute(ctx context.Context, sc scenarios.Scenario, opt Options) (*Summary, error) {
	if _, err := scenarios.Check("scenario", sc, scenarios.CheckOptions{MaxMemory: opt.MaxMemory}); err != nil {
		return nil, err
	}
	if err := sc.Validate(); err != nil { // resolves the method presets
		return nil, scenarios.Invalid("scenario", "%s", err.Error())
	}
	var run *Run
	if sc.Experiment == nil {
		var err error
		if run, err = Build(sc, supervisorBuild(sc)...); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating output folder: %w", err)
	}
	unlock, err := lockDir(opt.OutDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	resolved, err := scenarios.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("rendering scenario: %w", err)
	}
	if err := fsutil.WriteAtomic(filepath.Join(opt.OutDir, "scenario.yaml"), resolved); err != nil {
		return nil, err
	}
	// A stale summary or checkpoint from an earlier run in the same folder
	// must not survive a run that fails (nor be resumed into it).
	_ = os.Remove(filepath.Join(opt.OutDir, "summary.json"))
	_ = os.Remove(filepath.Join(opt.OutDir, checkpointFile))
	if sc.Experiment != nil {
		res, err := sc.Experiment.Params.Run(ctx, sc, NewEnv(sc, opt.OutDir, opt.Progress))
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", sc.Name, err)
		}
		return &Summary{Name: sc.Name, Seed: sc.Seed, Clients: sc.Clients, Experiment: res}, nil
	}

	f, err := os.Create(filepath.Join(opt.OutDir, metricsFile))
	if err != nil {
		return nil, fmt.Errorf("creating metrics file: %w", err)
	}
	defer f.Close()
	return execute(ctx, run, resolved, f, newMetricsWriter(f, 0, sha256.New()), nil, opt)
}

// execute runs a built run whose metrics go to mw (writing f), from the
// start or, with resume, from a checkpoint, and writes summary.json.
func execute(ctx context.Context, run *Run, resolved []byte, f *os.File, mw *metricsWriter, resume *fileCheckpoint, opt Options) (*Summary, error) {
	sc := run.Scenario
	driver, closeDriver, err := newDriver(sc.Runtime, run.Net, run.Factory(), resolved, opt.WorkerSecurity)
	if err != nil {
		return nil, err
	}
	defer closeDriver()
	sink := newRunSink(run, mw, opt.Progress)
	links, err := newLinkSink(sink, run.Net, opt.RecordLinks)
	if err != nil {
		return nil, err
	}
	if links.phases, err = openPhaseLog(opt.OutDir, resume != nil); err != nil {
		return nil, err
	}
	defer links.phases.close()
	cps := &optim.Checkpoints{Program: run.Program(), Every: sc.Runtime.CheckpointEvery}
	if resume != nil {
		sink.restore(resume.Sink)
		cps.Resume = &resume.Optim
	}
	scenarioSum := sha256.Sum256(resolved)
	cps.Save = func(cp *optim.Checkpoint) error {
		began := time.Now()
		size, err := saveCheckpoint(opt.OutDir, scenarioSum, cp, sink, mw, f)
		if err != nil {
			return err
		}
		if opt.Checkpointed != nil {
			opt.Checkpointed(CheckpointInfo{NextStep: cp.Next.Step, Path: filepath.Join(opt.OutDir, checkpointFile),
				Bytes: size, Took: time.Since(began)})
		}
		return nil
	}
	_, err = driver.Execute(ctx, cps, cps.Sink(links))
	var sum *Summary
	if err == nil {
		sum, err = sink.summary()
	}
	if lerr := links.finish(err == nil, opt.OutDir); err == nil {
		err = lerr
	}
	if rt, ok := driver.(*actors.Runtime); ok && sum != nil {
		sum.Wire = rt.Wire()
	}
	if cerr := f.Close(); err == nil && (mw.err != nil || cerr != nil) {
		err = fmt.Errorf("writing metrics: %w", errors.Join(mw.err, cerr))
	}
	var ce *optim.ClientError
	if err != nil && resume != nil && errors.As(err, &ce) && ce.Phase == optim.PhaseLoadState {
		// A state the client refuses is a checkpoint that does not fit.
		return nil, scenarios.Invalid(filepath.Join(opt.OutDir, checkpointFile), "%v", err)
	}
	if err != nil {
		// The evaluations made before a failure say how a run diverged.
		partial := &Summary{Name: sc.Name, Seed: sc.Seed, Clients: sc.Clients, Evals: sink.evals}
		return partial, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	if cps.Skipped != "" && opt.Warn != nil {
		opt.Warn(fmt.Sprintf("no checkpoints were taken: %s", cps.Skipped))
	}
	if w := sink.div.warning(); w != "" && opt.Warn != nil {
		opt.Warn(w)
	}
	if h := sum.Hypergradient; h != nil && h.NoOracle != "" && opt.Warn != nil {
		opt.Warn("no oracle to compare the hyper-gradient with (no oracle_rel_error): " + h.NoOracle)
	}
	b, err := MarshalFinite(sum)
	if err != nil {
		return nil, fmt.Errorf("encoding summary: %w", err)
	}
	if err := fsutil.WriteAtomic(filepath.Join(opt.OutDir, "summary.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	// A complete run needs no checkpoint (and resume refuses it).
	if err := os.Remove(filepath.Join(opt.OutDir, checkpointFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing the checkpoint: %w", err)
	}
	return sum, nil
}

// newDriver returns the driver a scenario asks for, with the clients built
// by factory (inside their actors for the actor runtime), and the function
// that releases it. With rs.Workers, the clients are built by worker
// processes from scenario (the resolved YAML) instead.
func newDriver(rs scenarios.RuntimeSpec, nw *graph.Network, factory optim.ClientFactory, scenario []byte, sec actors.Security) (optim.Driver, func(), error) {
	if rs.DriverName() == "sequential" {
		d, err := optim.NewSequential(nw, factory)
		if err != nil {
			return nil, nil, err
		}
		d.SetParallel(rs.Parallel)
		return d, func() {}, nil
	}
	rt, err := actors.New(nw, factory, actors.Options{RoundTimeout: rs.RoundTimeout, Workers: rs.Workers, Scenario: scenario, Security: sec})
	if err != nil {
		return nil, nil, err
	}
	return rt, rt.Close, nil
}

// DefaultOutDir is runs/<name>-<timestamp>.
func DefaultOutDir(name string, now time.Time) string {
	return filepath.Join("runs", name+"-"+now.Format("20060102-150405"))
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
	// NoOracle says why there is no oracle to compare with (I − Ā
	// singular, or ρ(Ā) ≥ 1: the Neumann series HGP sums diverges).
	NoOracle string `json:"no_oracle,omitempty"`
}

// stackedNorm is the 2-norm of the vectors stacked. When the sum of
// squares overflows it is recomputed with scaling, so an exploding
// hyper-gradient with finite entries keeps a number.
func stackedNorm(v [][]float64) float64 {
	s := 0.0
	for _, x := range v {
		for _, a := range x {
			s += a * a
		}
	}
	if !math.IsInf(s, 1) {
		return math.Sqrt(s)
	}
	s = 0
	for _, x := range v {
		s = math.Hypot(s, floats.Norm(x, 2))
	}
	return s
}
