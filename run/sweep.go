package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"hgpsim/actors"
	"hgpsim/internal/fsutil"
	"hgpsim/scenarios"
)

// SweepJob is one scenario of a sweep.
type SweepJob struct {
	Scenario scenarios.Scenario
	OutDir   string
	// File is the scenario file the job came from, Base the scenario's
	// name in it (the table's column) and Method the method applied (the
	// table's row; the scenario name when the file has no method).
	File, Base, Method string
	// Vary lists the grid values of this run, in the grid's order.
	Vary []Assignment
	// MaxMemory is the run's memory limit (see Options).
	MaxMemory int64
	// RecordLinks records the run's links into links.csv.gz in OutDir
	// (see Options.RecordLinks).
	RecordLinks bool
	// WorkerSecurity is the transport to the run's workers, if any (see
	// Options.WorkerSecurity).
	WorkerSecurity actors.Security
}

// Assignment is one grid value of a run.
type Assignment struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// GridAxis is one `--grid key=v1,v2,…`: a scenario field and its values.
type GridAxis struct {
	Key    string
	Values []string
}

// ParseGrid reads "key.path=v1,v2,…". Values are YAML scalars; a value
// with a comma needs its own axis. Keys joined by "+" take the same value
// together (network.delta_min+network.delta_max=0.2,0.5: every link's δ̄
// is exactly 0.2, then 0.5).
func ParseGrid(arg string) (GridAxis, error) {
	key, values, ok := strings.Cut(arg, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.TrimSpace(values) == "" {
		return GridAxis{}, scenarios.Invalid("--grid "+arg, "want key.path=v1,v2,…, e.g. network.delta_min=0.1,0.4,0.8")
	}
	for _, k := range strings.Split(key, "+") {
		if _, err := scenarios.ParseSet(k + "=x"); err != nil {
			return GridAxis{}, scenarios.Invalid("--grid "+arg, "empty key in %q", key)
		}
	}
	g := GridAxis{Key: key}
	seen := map[string]bool{}
	for _, v := range strings.Split(values, ",") {
		if v = strings.TrimSpace(v); v == "" {
			return GridAxis{}, scenarios.Invalid("--grid "+arg, "an empty value")
		}
		if seen[v] {
			return GridAxis{}, scenarios.Invalid("--grid "+arg, "value %q twice", v)
		}
		seen[v] = true
		g.Values = append(g.Values, v)
	}
	return g, nil
}

// ParseSeeds reads "1-5", "3", or "1,4,9" (ranges and lists mixed).
func ParseSeeds(arg string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(arg, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, scenarios.Invalid("--seeds "+arg, "%q is not a seed or a range of seeds", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, scenarios.Invalid("--seeds "+arg, "%q is not a range low-high", part)
			}
		}
		if b-a >= 10000 || len(out) > 10000 {
			return nil, scenarios.Invalid("--seeds "+arg, "at most 10000 seeds")
		}
		for s := a; s <= b; s++ {
			out = append(out, s)
		}
	}
	return out, nil
}

// SweepPlan is what a sweep runs: every file × method × grid point × seed.
type SweepPlan struct {
	Files   []string
	Methods []string        // nil: each file's own
	Sets    []scenarios.Set // applied to every run
	Grid    []GridAxis      // the Cartesian product of their values
	Seeds   []uint64        // replicate seeds; nil: each file's own
	Dir     string          // runs go into Dir/<run name>
	Check   scenarios.CheckOptions
}

// maxSweepRuns bounds a sweep.
const maxSweepRuns = 100000

// PlanSweep turns a plan into jobs: one folder per run, named after the
// scenario, the method, the grid values and the seed. Every run is loaded
// and validated like a file with its overrides; an invalid one, or two
// runs that would share a folder, are errors before anything runs.
func PlanSweep(p SweepPlan) ([]SweepJob, error) {
	points := [][]Assignment{nil}
	for _, g := range p.Grid {
		var next [][]Assignment
		for _, pt := range points {
			for _, v := range g.Values {
				next = append(next, append(slices.Clone(pt), Assignment{Key: g.Key, Value: v}))
			}
		}
		points = next
	}
	seeds := []*uint64{nil}
	if len(p.Seeds) > 0 {
		seeds = seeds[:0]
		for i := range p.Seeds {
			seeds = append(seeds, &p.Seeds[i])
		}
	}
	total := len(p.Files) * max(len(p.Methods), 1) * len(points) * len(seeds)
	if total > maxSweepRuns {
		return nil, scenarios.Invalid("sweep", "%d runs, more than the %d a sweep takes", total, maxSweepRuns)
	}
	keys := map[string]bool{}
	for _, g := range p.Grid {
		if keys[g.Key] {
			return nil, scenarios.Invalid("--grid "+g.Key, "the key is on two axes; give its values on one")
		}
		keys[g.Key] = true
	}
	if keys["seed"] && len(p.Seeds) > 0 {
		return nil, scenarios.Invalid("--grid seed", "replicate seeds go in --seeds, not in a grid axis as well")
	}
	if keys["method"] && len(p.Methods) > 0 {
		return nil, scenarios.Invalid("--grid method", "methods go in --methods, not in a grid axis as well")
	}
	short := shortKeys(p.Grid)
	var jobs []SweepJob
	byFolder := map[string]string{} // folder → what writes it
	for _, f := range p.Files {
		base, err := scenarios.LoadWith(f, p.Sets)
		if err != nil {
			return nil, err
		}
		if base.Experiment != nil {
			// The tables are of test accuracies, which an experiment
			// does not have.
			return nil, scenarios.Invalid(f, "experiments are not for sweep (nothing to tabulate); run them with `hgpsim run`")
		}
		variants := []string{base.Method}
		if len(p.Methods) > 0 {
			variants = p.Methods
		}
		for _, m := range variants {
			m = strings.TrimSpace(m)
			for _, pt := range points {
				for _, seed := range seeds {
					sets := slices.Clone(p.Sets)
					name := base.Name
					if len(p.Methods) > 0 {
						name += "-" + m
					}
					for k, a := range pt {
						for _, key := range strings.Split(a.Key, "+") {
							set, err := scenarios.ParseSet(key + "=" + a.Value)
							if err != nil {
								return nil, err
							}
							set.Arg += " (from --grid)"
							sets = append(sets, set)
						}
						name += "-" + short[k] + "_" + sanitize(a.Value)
					}
					if seed != nil {
						sets = append(sets, scenarios.Set{Arg: fmt.Sprintf("seed=%d (from --seeds)", *seed), Path: []string{"seed"}, Value: strconv.FormatUint(*seed, 10)})
						name += fmt.Sprintf("-seed_%d", *seed)
					}
					if len(p.Methods) > 0 {
						sets = append(sets, scenarios.Set{Arg: "method=" + m + " (from --methods)", Path: []string{"method"}, Value: strconv.Quote(m)})
					}
					sets = append(sets, scenarios.Set{Arg: "name=" + name, Path: []string{"name"}, Value: strconv.Quote(name)})
					src := f
					if m != "" {
						src = fmt.Sprintf("%s (method %s)", f, m)
					}
					sc, err := scenarios.LoadWith(f, sets)
					if err != nil {
						return nil, err
					}
					if _, err := scenarios.Check(src, sc, p.Check); err != nil {
						return nil, err
					}
					if prev, dup := byFolder[name]; dup {
						return nil, scenarios.Invalid(src, "this run and %s would both write runs named %q into %s; give the scenarios distinct names",
							prev, name, filepath.Join(p.Dir, name))
					}
					byFolder[name] = src
					row := sc.Method
					if row == "" {
						row = base.Name
					}
					jobs = append(jobs, SweepJob{Scenario: sc, OutDir: filepath.Join(p.Dir, name), File: f, Base: base.Name,
						Method: row, Vary: pt, MaxMemory: p.Check.MaxMemory})
				}
			}
		}
	}
	return jobs, nil
}

// shortKeys names the grid's keys in run names: the last element of each
// path (of each joined key), or the whole key when two axes share it.
func shortKeys(grid []GridAxis) []string {
	out := make([]string, len(grid))
	count := map[string]int{}
	for _, g := range grid {
		count[ShortKey(g.Key)]++
	}
	for k, g := range grid {
		short := ShortKey(g.Key)
		if count[short] > 1 {
			short = g.Key
		}
		out[k] = sanitize(short)
	}
	return out
}

// ShortKey is the last element of a key path, or of each of the paths
// joined by "+".
func ShortKey(key string) string {
	parts := strings.Split(key, "+")
	for k, p := range parts {
		parts[k] = p[strings.LastIndex(p, ".")+1:]
	}
	return strings.Join(parts, "+")
}

// sanitize keeps the characters a run name may have.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// SweepResult is the outcome of one job.
type SweepResult struct {
	Job     SweepJob
	Summary *Summary
	Wall    time.Duration
	Err     error
	// Kept says the run had completed in an earlier sweep into the same
	// folder and was not run again; Resumed that it continued from its
	// checkpoint.
	Kept, Resumed bool
}

// jobState is what a job's folder holds before a sweep starts.
type jobState int

const (
	jobFresh  jobState = iota // nothing to keep: run it
	jobDone                   // summary.json of the same scenario: keep it
	jobResume                 // a checkpoint of the same scenario: resume it
)

// inspectJob says what to do with j's folder. A folder whose scenario.yaml
// is not the job's resolved scenario is refused: a sweep continued with
// another command must not mix the outputs of two studies.
func inspectJob(j SweepJob, owner string) (jobState, error) {
	sc := j.Scenario
	if err := sc.Validate(); err != nil { // resolves the presets, as Execute does
		return jobFresh, scenarios.Invalid(j.OutDir, "%s", err.Error())
	}
	want, err := scenarios.Marshal(sc)
	if err != nil {
		return jobFresh, fmt.Errorf("rendering scenario: %w", err)
	}
	path := filepath.Join(j.OutDir, scenarioFile)
	have, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return jobFresh, nil
	case err != nil:
		return jobFresh, fmt.Errorf("reading %s: %w", path, err)
	case !bytes.Equal(have, want):
		return jobFresh, scenarios.Invalid(path, "holds another scenario than this %s's run %s (the command or a scenario file changed); give the %s another --out, or remove the folder", owner, sc.Name, owner)
	}
	if _, err := os.Stat(filepath.Join(j.OutDir, summaryFile)); err == nil {
		removeStaleCheckpoint(j.OutDir)
		return jobDone, nil
	}
	if _, err := os.Stat(filepath.Join(j.OutDir, checkpointFile)); err == nil {
		return jobResume, nil
	}
	return jobFresh, nil
}

// CheckSweepFolders refuses, before a sweep writes anything, a run folder
// that holds another scenario than its job's (see Sweep).
func CheckSweepFolders(jobs []SweepJob) error {
	for _, j := range jobs {
		if _, err := inspectJob(j, "sweep"); err != nil {
			return err
		}
	}
	return nil
}

// Sweep runs jobs with at most `parallel` at once and returns the results in
// job order. A failing job does not stop the others. Two jobs with the same
// output folder are an error before anything runs.
//
// A sweep continues one that stopped in the same folders: a run that
// completed (summary.json, same resolved scenario) is read back, not run;
// one with a checkpoint is resumed from it; the others run from the start.
// A folder holding another scenario is an error before anything runs.
// Since every run's outputs are byte-identical however often it stopped,
// so are the sweep's.
func Sweep(ctx context.Context, jobs []SweepJob, parallel int, done func(SweepResult)) ([]SweepResult, error) {
	seen := map[string]string{}
	for _, j := range jobs {
		dir := filepath.Clean(j.OutDir)
		if prev, dup := seen[dir]; dup {
			return nil, scenarios.Invalid("sweep", "runs %s and %s would both write into %s", prev, j.Scenario.Name, dir)
		}
		seen[dir] = j.Scenario.Name
	}
	states := make([]jobState, len(jobs))
	for k, j := range jobs {
		var err error
		if states[k], err = inspectJob(j, "sweep"); err != nil {
			return nil, err
		}
	}
	if parallel < 1 {
		parallel = 1
	}
	res := make([]SweepResult, len(jobs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	report := func(k int, r SweepResult) {
		res[k] = r
		if done != nil {
			mu.Lock()
			done(r)
			mu.Unlock()
		}
	}
	for k, j := range jobs {
		if states[k] == jobDone {
			run, err := LoadRun(j.OutDir)
			r := SweepResult{Job: j, Summary: run.Summary, Err: err, Kept: true}
			if err == nil && run.Summary == nil {
				r.Err = fmt.Errorf("run %s: %s", j.Scenario.Name, run.Failure)
			}
			report(k, r)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(k int, j SweepJob, state jobState) {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			r := SweepResult{Job: j}
			r.Summary, r.Resumed, r.Err = runJob(ctx, j, state)
			r.Wall = time.Since(start)
			report(k, r)
		}(k, j, states[k])
	}
	wg.Wait()
	return res, nil
}

// runJob runs, or resumes, one job and leaves its error in the folder for
// the reports (error.txt; removed when the run starts again).
func runJob(ctx context.Context, j SweepJob, state jobState) (*Summary, bool, error) {
	errPath := filepath.Join(j.OutDir, runErrorFile)
	if err := os.Remove(errPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	opt := Options{OutDir: j.OutDir, MaxMemory: j.MaxMemory, WorkerSecurity: j.WorkerSecurity}
	if j.RecordLinks {
		opt.RecordLinks = filepath.Join(j.OutDir, "links.csv.gz")
	}
	var sum *Summary
	var err error
	resumed := false
	// A recording covers a whole run: a run that records its links starts
	// over instead of resuming.
	if state == jobResume && !j.RecordLinks {
		sum, err = Resume(ctx, ResumeOptions{Options: opt})
		resumed = true
		if sum == nil && scenarios.IsInvalid(err) && ctx.Err() == nil {
			// A checkpoint that cannot be resumed (of another version of
			// hgpsim, say) costs the run's time, not the sweep.
			sum, err = Execute(ctx, j.Scenario, opt)
			resumed = false
		}
	} else {
		sum, err = Execute(ctx, j.Scenario, opt)
	}
	if err != nil {
		if _, statErr := os.Stat(j.OutDir); statErr == nil {
			_ = fsutil.WriteAtomic(errPath, []byte(oneLine(err.Error())+"\n"))
		}
	}
	return sum, resumed, err
}

// oneLine is the first line of s.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
