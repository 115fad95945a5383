package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"hgpsim/actors"
	"hgpsim/graph"
	"hgpsim/internal/fsutil"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// ExperimentRunsDir is the folder, below an experiment's output folder,
// that holds one folder per derived run.
const ExperimentRunsDir = "runs"

// runReportFile holds, in the folder of a training run an experiment ran
// (scenarios.Env.Run), what the run reported to the experiment.
const runReportFile = "report.gob"

// RunFolders is implemented by the Env Execute gives an experiment: each
// derived run has a folder below the experiment's, so that an experiment
// run again on the same folder keeps what its runs recorded.
type RunFolders interface {
	// RunFolder returns the folder of the derived run named name:
	// runs/<name> below the experiment's folder. A name asked for again
	// gets runs/<name>.2, runs/<name>.3, … in the order asked, which an
	// experiment keeps from one invocation to the next.
	RunFolder(name string) string
	// ReplayOnly reports that nothing may run: every derived run must have
	// finished in an earlier invocation (RebuildExperiment).
	ReplayOnly() bool
}

// env is what an experiment gets from Execute.
type env struct {
	sc       scenarios.Scenario
	dir      string
	progress Progress
	replay   bool

	mu    sync.Mutex
	names map[string]int // times each run name was asked for
}

// NewEnv returns the environment Execute gives an experiment of sc that
// writes into dir.
func NewEnv(sc scenarios.Scenario, dir string, progress Progress) scenarios.Env {
	return &env{sc: sc, dir: dir, progress: progress}
}

func (e *env) WriteFile(name string, b []byte) error {
	return fsutil.WriteAtomic(filepath.Join(e.dir, name), b)
}

// NewDriver runs an experiment's own clients in this process even when the
// scenario names workers: they are built by the experiment, not from a
// scenario a worker could rebuild them from.
func (e *env) NewDriver(nw *graph.Network, factory optim.ClientFactory) (optim.Driver, func(), error) {
	if e.replay {
		return nil, nil, errors.New("replaying an experiment's runs runs nothing")
	}
	rs := e.sc.Runtime
	rs.Workers = nil
	return newDriver(rs, nw, factory, nil, actors.Security{})
}

func (e *env) Progress(what string, step, total int) {
	if e.progress != nil {
		e.progress(optim.RoundEvent{Phase: what, Round: step}, Aggregate{}, total)
	}
}

// RunFolder implements RunFolders.
func (e *env) RunFolder(name string) string {
	base := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, name)
	if base == "" || base == "." || base == ".." {
		base = "_" + base
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.names == nil {
		e.names = map[string]int{}
	}
	e.names[base]++
	if k := e.names[base]; k > 1 {
		base += "." + strconv.Itoa(k)
	}
	return filepath.Join(e.dir, ExperimentRunsDir, base)
}

// ReplayOnly implements RunFolders.
func (e *env) ReplayOnly() bool { return e.replay }

// Run executes a training run into its run folder (RunFolder(sub)), or
// reads back what it reported when it finished in an earlier invocation
// of the experiment (summary.json and report.gob of the same scenario), or
// resumes it from its checkpoint. A folder holding another scenario is
// refused.
func (e *env) Run(ctx context.Context, sc scenarios.Scenario, sub string) (*scenarios.RunReport, error) {
	sc.Runtime = e.sc.Runtime
	dir := e.RunFolder(sub)
	state, err := inspectJob(SweepJob{Scenario: sc, OutDir: dir}, "experiment")
	if err != nil {
		return nil, err
	}
	if state == jobDone {
		var rep scenarios.RunReport
		b, err := os.ReadFile(filepath.Join(dir, runReportFile))
		if err == nil {
			err = optim.DecodeState(b, &rep)
		}
		if err == nil {
			return &rep, nil
		}
		// Killed between summary.json and report.gob: run it again.
		if e.replay {
			return nil, scenarios.Invalid(dir, "%s is missing or unreadable (%v); run the experiment again with the same command and --out", runReportFile, err)
		}
	}
	if e.replay {
		return nil, scenarios.Invalid(dir, "the run did not finish (no %s); run the experiment again with the same command and --out to finish it", summaryFile)
	}
	opt := Options{OutDir: dir, MaxMemory: -1}
	var sum *Summary
	if state == jobResume {
		sum, err = Resume(ctx, ResumeOptions{Options: opt})
		if sum == nil && scenarios.IsInvalid(err) && ctx.Err() == nil {
			// A checkpoint that cannot be resumed costs the run's time.
			sum, err = Execute(ctx, sc, opt)
		}
	} else {
		sum, err = Execute(ctx, sc, opt)
	}
	if err != nil {
		return nil, err
	}
	rep := &scenarios.RunReport{Evals: sum.Evals, Final: sum.Final}
	for _, t := range sum.Traffic {
		rep.Traffic.Add(t)
	}
	b, err := optim.EncodeState(rep)
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteAtomic(filepath.Join(dir, runReportFile), b); err != nil {
		return nil, err
	}
	return rep, nil
}

// RebuildExperiment writes the outputs of the experiment whose folder is
// dir again from its derived runs' folders, running nothing: the
// experiment runs as it did, every derived run replayed from what it
// recorded (see RunFolders). A run that did not finish is an error naming
// its folder. On a finished experiment the outputs come out byte for byte
// as the experiment wrote them.
func RebuildExperiment(ctx context.Context, dir string) (*Summary, error) {
	path := filepath.Join(dir, scenarioFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, scenarios.Invalid(dir, "no %s: not an experiment's folder", scenarioFile)
	}
	sc, err := scenarios.Load(path)
	if err != nil {
		return nil, err
	}
	if sc.Experiment == nil {
		return nil, scenarios.Invalid(path, "not an experiment (no experiment section)")
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, err := sc.Experiment.Params.Run(ctx, sc, &env{sc: sc, dir: dir, replay: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sc.Name, err)
	}
	return &Summary{Name: sc.Name, Seed: sc.Seed, Clients: sc.Clients, Experiment: res}, nil
}
