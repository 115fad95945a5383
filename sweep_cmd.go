package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"hgpsim/report"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// sweepFlags are the flags of `hgpsim sweep`.
type sweepFlags struct {
	out     string
	methods string
	jobs    int
	seed    uint64
	mem     memoryFlag
}

func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep FILE...",
		Short: "Run scenarios (× methods) in parallel and tabulate",
		Long: `Run scenario files (times --methods) in parallel and write results.md,
results.csv and validation.png to the output folder, one run folder per
scenario and method below it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{"sweep needs at least one scenario FILE"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdSweep(args, f, cmd.Flags().Changed("seed"), stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&f.out, "out", "", "output folder (default runs/sweep-<timestamp>)")
	cmd.Flags().StringVar(&f.methods, "methods", "", "comma-separated methods applied to every file (default: each file's own)")
	cmd.Flags().IntVar(&f.jobs, "jobs", runtime.NumCPU(), "scenarios run at once")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "override every scenario's seed")
	addMemoryFlag(cmd.Flags(), &f.mem)
	return cmd
}

// cmdSweep runs scenario files (times methods) in parallel and writes the
// paper-style results table and validation plot.
func cmdSweep(files []string, f sweepFlags, seedSet bool, stdout, stderr io.Writer) error {
	if f.jobs < 1 {
		return usageError{fmt.Sprintf("--jobs must be >= 1, got %d", f.jobs)}
	}
	var ms []string
	if f.methods != "" {
		ms = strings.Split(f.methods, ",")
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", "sweep-"+time.Now().Format("20060102-150405"))
	}
	var seedOverride *uint64
	if seedSet {
		seedOverride = &f.seed
	}
	jobList, err := run.PlanSweep(files, ms, seedOverride, dir, scenarios.CheckOptions{MaxMemory: f.mem.bytes})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	ctx, sigs := notifyStop(context.Background(), func(sig os.Signal) {
		fmt.Fprintf(stderr, "sweep: %s received, stopping the runs after their current round; a second signal kills at once\n",
			signalName(sig))
	})
	defer sigs.stop()
	fmt.Fprintf(stderr, "sweep: %d runs, %d at once, into %s\n", len(jobList), f.jobs, dir)
	start := time.Now()
	results, err := run.Sweep(ctx, jobList, f.jobs, func(r run.SweepResult) {
		fmt.Fprintln(stderr, sweepLine(r))
	})
	if err != nil {
		return err
	}
	if err := report.WriteSweepTables(dir, results); err != nil {
		return err
	}
	if err := report.WriteSweepPlot(filepath.Join(dir, "validation.png"), results); err != nil {
		return err
	}
	table, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	fmt.Fprintf(stdout, "%s\ntotal wall time %s\n", table, time.Since(start).Round(time.Second))
	for _, r := range results {
		if r.Err != nil {
			return sigs.wrap(fmt.Errorf("%d of %d runs failed (see above)", countFailed(results), len(results)))
		}
	}
	return nil
}

// sweepLine reports one finished run of a sweep. The best outer step is
// only shown for runs with an outer loop; without one there is a single
// evaluation and its accuracies are the final ones.
func sweepLine(r run.SweepResult) string {
	name, wall := r.Job.Scenario.Name, r.Wall.Round(time.Second)
	switch s := r.Summary; {
	case r.Err != nil:
		return fmt.Sprintf("sweep: %s failed after %s: %s", name, wall, oneLine(r.Err.Error()))
	case s == nil || s.Experiment != nil:
		return fmt.Sprintf("sweep: %s done in %s", name, wall)
	case len(s.Outer) > 0 && s.Best != nil:
		return fmt.Sprintf("sweep: %s done in %s: test acc %.1f / %.1f %% (mean / 10th percentile; best outer step %d of 0–%d)",
			name, wall, 100*s.Best.TestAcc, 100*s.Best.TestAccP, s.Best.Step, len(s.Outer)-1)
	default:
		return fmt.Sprintf("sweep: %s done in %s: test acc %.1f / %.1f %% (mean / 10th percentile)",
			name, wall, 100*s.Final.TestAcc, 100*s.Final.TestAccP)
	}
}

func countFailed(rs []run.SweepResult) int {
	n := 0
	for _, r := range rs {
		if r.Err != nil {
			n++
		}
	}
	return n
}
