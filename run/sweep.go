package run

import (
	"context"
	"fmt"
	"hgpsim/scenarios"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// SweepJob is one scenario of a sweep.
type SweepJob struct {
	Scenario scenarios.Scenario
	OutDir   string
	// File is the scenario file the job came from, Base the scenario's
	// name in it (the table's column) and Method the method applied (the
	// table's row; the scenario name when the file has no method).
	File, Base, Method string
	// MaxMemory is the run's memory limit (see Options).
	MaxMemory int64
}

// PlanSweep turns scenario files (× methods, when given) into jobs under
// dir: one folder per run, named after the scenario (and the method). Two
// runs that would share a folder — two files with the same name, or the
// same file twice — are an error before anything runs. seed, when not nil,
// overrides every scenario's seed.
func PlanSweep(files, methods []string, seed *uint64, dir string, opt scenarios.CheckOptions) ([]SweepJob, error) {
	var jobs []SweepJob
	byFolder := map[string]string{} // folder → "file (method)"
	for _, f := range files {
		base, err := scenarios.Load(f)
		if err != nil {
			return nil, err
		}
		if seed != nil {
			base.Seed = *seed
		}
		if base.Experiment != nil {
			// The tables are of test accuracies, which an experiment
			// experiment does not have.
			return nil, scenarios.Invalid(f, "experiments are not for sweep (nothing to tabulate); run them with `hgpsim run`")
		}
		variants := []string{base.Method}
		if len(methods) > 0 {
			variants = methods
		}
		for _, m := range variants {
			sc := base
			sc.Method = strings.TrimSpace(m)
			if len(methods) > 0 {
				sc.Name = base.Name + "-" + sc.Method
			}
			src := f
			if sc.Method != "" {
				src = fmt.Sprintf("%s (method %s)", f, sc.Method)
			}
			if err := sc.Validate(); err != nil {
				return nil, scenarios.Invalid(src, "%v", err)
			}
			if _, err := scenarios.Check(src, sc, opt); err != nil {
				return nil, err
			}
			folder := sc.Name
			if prev, dup := byFolder[folder]; dup {
				return nil, scenarios.Invalid(src, "this run and %s would both write runs named %q into %s; give the scenarios distinct names",
					prev, folder, filepath.Join(dir, folder))
			}
			byFolder[folder] = src
			row := sc.Method
			if row == "" {
				row = base.Name
			}
			jobs = append(jobs, SweepJob{Scenario: sc, OutDir: filepath.Join(dir, folder), File: f, Base: base.Name, Method: row, MaxMemory: opt.MaxMemory})
		}
	}
	return jobs, nil
}

// SweepResult is the outcome of one job.
type SweepResult struct {
	Job     SweepJob
	Summary *Summary
	Wall    time.Duration
	Err     error
}

// Sweep runs jobs with at most `parallel` at once and returns the results in
// job order. A failing job does not stop the others. Two jobs with the same
// output folder are an error before anything runs.
func Sweep(ctx context.Context, jobs []SweepJob, parallel int, done func(SweepResult)) ([]SweepResult, error) {
	seen := map[string]string{}
	for _, j := range jobs {
		dir := filepath.Clean(j.OutDir)
		if prev, dup := seen[dir]; dup {
			return nil, scenarios.Invalid("sweep", "runs %s and %s would both write into %s", prev, j.Scenario.Name, dir)
		}
		seen[dir] = j.Scenario.Name
	}
	if parallel < 1 {
		parallel = 1
	}
	res := make([]SweepResult, len(jobs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for k, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(k int, j SweepJob) {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			sum, err := Execute(ctx, j.Scenario, Options{OutDir: j.OutDir, MaxMemory: j.MaxMemory})
			r := SweepResult{Job: j, Summary: sum, Wall: time.Since(start), Err: err}
			res[k] = r
			if done != nil {
				mu.Lock()
				done(r)
				mu.Unlock()
			}
		}(k, j)
	}
	wg.Wait()
	return res, nil
}
