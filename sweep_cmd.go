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
	out      string
	methods  string
	jobs     int
	seed     uint64
	mem      memoryFlag
	set      setFlag
	grid     gridFlag
	seeds    seedsFlag
	plot     string
	curves   string
	record   bool // --record-links
	security securityFlags
}

const sweepLong = `Run scenario files × --methods × every point of the --grid × every seed
of --seeds, at most --jobs at once, one run folder each below the output
folder, and write there:

  results.csv   one row per run: file, scenario, run, method, network,
                seed, every varied key, status, every metric, error
  study.csv     one row per scenario × method × grid point: runs, failed,
                each metric's mean and 95 % half-width over the seeds
  study.md      the same for the --plot metrics, as "mean ± half-width"
  METRIC.png    each --plot metric against the first --grid key (against
                the method without a grid), one line per method and
                value of the other keys, with 95 % intervals
  curve-METRIC.png   each --curves metric against the round, one line per
                group (mean over seeds)
  results.md, validation.png   the paper's table (methods × scenarios) and
                validation curves, when there is no grid and one seed

Runs are named <scenario>[-<method>][-<key>_<value>…][-seed_<n>]. The
same command with the same --out continues a sweep that stopped (Ctrl-C,
a kill, a crash): runs that completed are kept, runs with a checkpoint
resume from it, the others run; the tables come out byte-identical to
those of a sweep that never stopped. A run folder holding another
scenario than the command's is refused (exit code 2). The tables are
built from the run folders (sweep.json lists the runs), so
hgpsim report DIR rebuilds them without running anything. Every run
is validated before any starts; a bad --set, --grid value or seed is an
error (exit code 2) naming it. Intervals are Student-t over the seeds that
completed.

Metrics:
`

func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep FILE...",
		Short: "Run a study: files × methods × grid × seeds, in parallel, with tables and plots",
		Long:  sweepLong + report.MetricsHelp(),
		Example: `  hgpsim sweep scenarios/failures/bernoulli.yaml --methods sgp,pdbo-mtl-da \
      --grid network.delta_min=0.1,0.4,0.8 --seeds 1-5 --plot test_acc,consensus`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{"sweep needs at least one scenario FILE"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("seed") {
				if cmd.Flags().Changed("seeds") {
					return usageError{"--seed and --seeds together: give the seeds in --seeds"}
				}
				f.seeds.seeds = []uint64{f.seed}
			}
			return cmdSweep(args, f, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&f.out, "out", "", "output folder (default runs/sweep-<timestamp>)")
	cmd.Flags().StringVar(&f.methods, "methods", "", "comma-separated methods applied to every file (default: each file's own)")
	cmd.Flags().IntVar(&f.jobs, "jobs", runtime.NumCPU(), "scenarios run at once")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "run every scenario with this seed")
	cmd.Flags().Var(&f.seeds, "seeds", "replicate seeds: every run once per seed, e.g. 1-5 or 1,4,9")
	cmd.Flags().Var(&f.grid, "grid", "vary a scenario field over values, e.g. network.delta_min=0.1,0.4 (repeatable: the Cartesian product); keys joined by + take the same value: network.delta_min+network.delta_max=0.2,0.5")
	cmd.Flags().StringVar(&f.plot, "plot", report.DefaultStudyMetrics, "metrics for study.md and METRIC.png (see Metrics)")
	cmd.Flags().StringVar(&f.curves, "curves", "", "metrics to draw against the round, e.g. train_loss,consensus")
	cmd.Flags().BoolVar(&f.record, "record-links", false, "record each run's realized links into links.csv.gz (and links.png) in its run folder, for hgpsim run --replay-links")
	addSetFlag(cmd.Flags(), &f.set)
	addMemoryFlag(cmd.Flags(), &f.mem)
	addSecurityFlags(cmd.Flags(), &f.security)
	return cmd
}

// cmdSweep plans, runs and reports a sweep.
func cmdSweep(files []string, f sweepFlags, stdout, stderr io.Writer) error {
	if f.jobs < 1 {
		return usageError{fmt.Sprintf("--jobs must be >= 1, got %d", f.jobs)}
	}
	// The metrics are checked here; the tables read them from sweep.json.
	if _, err := report.ParseMetrics(f.plot, false); err != nil {
		return usageError{"--plot: " + err.Error()}
	}
	if _, err := report.ParseMetrics(f.curves, true); err != nil {
		return usageError{"--curves: " + err.Error()}
	}
	var ms []string
	if f.methods != "" {
		ms = strings.Split(f.methods, ",")
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", "sweep-"+time.Now().Format("20060102-150405"))
	}
	jobList, err := run.PlanSweep(run.SweepPlan{Files: files, Methods: ms, Sets: f.set.sets, Grid: f.grid.axes,
		Seeds: f.seeds.seeds, Dir: dir, Check: scenarios.CheckOptions{MaxMemory: f.mem.bytes}})
	if err != nil {
		return err
	}
	if err := run.CheckSweepFolders(jobList); err != nil {
		return err
	}
	boundHeap(sweepResources(jobList, f.jobs))
	sec, err := f.security.security()
	if err != nil {
		return err
	}
	for k := range jobList {
		jobList[k].RecordLinks = f.record
		jobList[k].WorkerSecurity = sec
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := run.WriteSweepManifest(dir, jobList, f.plot, f.curves); err != nil {
		return err
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
	// The tables come from the run folders, as `hgpsim report` makes
	// them: a sweep continued after a stop writes the same bytes.
	table, _, err := report.Rebuild(dir)
	if err != nil {
		return err
	}
	text, _ := os.ReadFile(filepath.Join(dir, table))
	fmt.Fprintf(stdout, "%s\ntotal wall time %s\n", text, time.Since(start).Round(time.Second))
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
	if r.Resumed {
		name += " (resumed from its checkpoint)"
	}
	switch s := r.Summary; {
	case r.Err != nil && r.Kept:
		return fmt.Sprintf("sweep: %s: cannot read its completed run: %s", name, oneLine(r.Err.Error()))
	case r.Err != nil:
		line := fmt.Sprintf("sweep: %s failed after %s: %s", name, wall, oneLine(r.Err.Error()))
		if _, err := os.Stat(filepath.Join(r.Job.OutDir, "checkpoint.bin")); err == nil {
			line += "; the same command continues it from its checkpoint"
		}
		return line
	case r.Kept:
		return fmt.Sprintf("sweep: %s completed earlier, kept", name)
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
