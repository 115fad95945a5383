package report

import (
	"errors"
	"fmt"
	"path/filepath"

	"hgpsim/run"
)

// LoadSweep reads the sweep in dir from its folders alone: sweep.json for
// what each run is, each run folder for its results (run.LoadRun). A run
// that did not complete is a failed one, with its error.txt or "did not
// complete" as the error.
func LoadSweep(dir string) ([]run.SweepResult, StudyOptions, error) {
	m, err := run.ReadSweepManifest(dir)
	if err != nil {
		return nil, StudyOptions{}, err
	}
	var opt StudyOptions
	if opt.Metrics, err = ParseMetrics(m.Plot, false); err != nil {
		return nil, opt, fmt.Errorf("%s: plot: %w", filepath.Join(dir, "sweep.json"), err)
	}
	if opt.Curves, err = ParseMetrics(m.Curves, true); err != nil {
		return nil, opt, fmt.Errorf("%s: curves: %w", filepath.Join(dir, "sweep.json"), err)
	}
	results := make([]run.SweepResult, len(m.Runs))
	for k, mr := range m.Runs {
		j := mr.Job(dir)
		f, err := run.LoadRun(j.OutDir)
		if err != nil {
			return nil, opt, err
		}
		results[k] = run.SweepResult{Job: j, Summary: f.Summary}
		if !f.Complete {
			results[k].Err = errors.New(f.Failure)
		}
	}
	return results, opt, nil
}

// Rebuild writes every table and plot of the sweep in dir from its run
// folders, running nothing: results.csv, study.csv, study.md, the metric
// and curve plots and, for the paper's table (PaperTable), results.md and
// validation.png. It returns the name of the table to show: results.md or
// study.md. A sweep writes its tables this way too, so that a sweep
// continued after a stop, and Rebuild, give the same bytes.
func Rebuild(dir string) (string, []run.SweepResult, error) {
	results, opt, err := LoadSweep(dir)
	if err != nil {
		return "", nil, err
	}
	if err := WriteStudy(dir, results, opt); err != nil {
		return "", nil, err
	}
	if !PaperTable(results) {
		return "study.md", results, nil
	}
	if err := WriteSweepTables(dir, results); err != nil {
		return "", nil, err
	}
	if err := WriteSweepPlot(filepath.Join(dir, "validation.png"), results); err != nil {
		return "", nil, err
	}
	return "results.md", results, nil
}
