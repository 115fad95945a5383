package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"hgpsim/scenarios"
)

// cmdSweep runs scenario files (times methods) in parallel and writes the
// paper-style results table and validation plot.
func cmdSweep(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	out := fs.String("out", "", "output folder (default runs/sweep-<timestamp>)")
	methods := fs.String("methods", "", "comma-separated methods applied to every file (default: each file's own)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "scenarios run at once")
	seed := fs.String("seed", "", "override every scenario's seed")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{"sweep needs at least one scenario FILE"}
	}
	if *jobs < 1 {
		return usageError{fmt.Sprintf("--jobs must be >= 1, got %d", *jobs)}
	}
	var ms []string
	if *methods != "" {
		ms = strings.Split(*methods, ",")
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", "sweep-"+time.Now().Format("20060102-150405"))
	}
	var seedOverride *uint64
	if *seed != "" {
		var sc scenarios.Scenario
		if err := applySeed(&sc, *seed); err != nil {
			return err
		}
		seedOverride = &sc.Seed
	}
	jobList, err := scenarios.PlanSweep(pos, ms, seedOverride, dir, scenarios.CheckOptions{})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "sweep: %d runs, %d at once, into %s\n", len(jobList), *jobs, dir)
	start := time.Now()
	results, err := scenarios.Sweep(ctx, jobList, *jobs, func(r scenarios.SweepResult) {
		if r.Err != nil {
			fmt.Fprintf(stderr, "sweep: %s failed after %s: %s\n", r.Job.Scenario.Name, r.Wall.Round(time.Second), oneLine(r.Err.Error()))
			return
		}
		b := r.Summary.Headline()
		fmt.Fprintf(stderr, "sweep: %s done in %s: test acc %.1f / %.1f (best step %d)\n",
			r.Job.Scenario.Name, r.Wall.Round(time.Second), 100*b.TestAcc, 100*b.TestAccP, b.Step)
	})
	if err != nil {
		return err
	}
	if err := scenarios.WriteSweepTables(dir, results); err != nil {
		return err
	}
	if err := scenarios.WriteSweepPlot(filepath.Join(dir, "validation.png"), results); err != nil {
		return err
	}
	table, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	fmt.Fprintf(stdout, "%s\ntotal wall time %s\n", table, time.Since(start).Round(time.Second))
	for _, r := range results {
		if r.Err != nil {
			return fmt.Errorf("%d of %d runs failed (see above)", countFailed(results), len(results))
		}
	}
	return nil
}

func countFailed(rs []scenarios.SweepResult) int {
	n := 0
	for _, r := range rs {
		if r.Err != nil {
			n++
		}
	}
	return n
}
