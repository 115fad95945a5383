package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// resumeFlags are the flags of `hgpsim resume`: the runtime of the resumed
// run, which outputs do not depend on.
type resumeFlags struct {
	mem        memoryFlag
	workers    []string
	driver     string
	parallel   int
	cpuprofile string
	security   securityFlags
}

func newResumeCmd(stderr io.Writer) *cobra.Command {
	var f resumeFlags
	cmd := &cobra.Command{
		Use:   "resume DIR",
		Short: "Continue a stopped run from its last checkpoint",
		Long: `Continue the run whose output folder is DIR from its last checkpoint
(checkpoint.bin, written at outer-step boundaries every
runtime.checkpoint_every steps): the run is rebuilt from DIR/scenario.yaml,
every client, the schedule and the summary are restored, metrics.jsonl is
cut back to where it stood at the checkpoint, and the remaining phases run.
metrics.jsonl and summary.json come out byte-identical to those of a run
that never stopped (summary.json names the driver of the resumed part).

The runtime may change (--driver, --parallel, --workers): results do not
depend on it. A run that completed, a folder without a checkpoint, or a
scenario.yaml or metrics.jsonl edited since the checkpoint is refused
(exit code 2).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Sprintf("resume needs exactly one run folder DIR, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdResume(args[0], f, cmd.Flags(), stderr)
		},
	}
	cmd.Flags().StringSliceVar(&f.workers, "workers", nil, "worker processes to host the clients, host:port,... (selects the actor driver; see hgpsim worker)")
	cmd.Flags().StringVar(&f.driver, "driver", "", "driver of the resumed run: auto, actors or sequential (default: the scenario's)")
	cmd.Flags().IntVar(&f.parallel, "parallel", 0, "goroutines of the sequential driver (default: the scenario's; 0 = every core)")
	cmd.Flags().StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the resumed run to FILE")
	addMemoryFlag(cmd.Flags(), &f.mem)
	addSecurityFlags(cmd.Flags(), &f.security)
	return cmd
}

type changedFlags interface{ Changed(name string) bool }

func cmdResume(dir string, f resumeFlags, flags changedFlags, stderr io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageError{fmt.Sprintf("%s is not a run folder", dir)}
	}
	if flags.Changed("workers") {
		if err := scenarios.ValidateWorkers(f.workers); err != nil {
			return usageError{"--workers: " + err.Error()}
		}
	}
	if flags.Changed("parallel") && (f.parallel < 0 || f.parallel > scenarios.MaxParallel) {
		return usageError{fmt.Sprintf("--parallel: must be in [0, %d] (0: every core), got %d", scenarios.MaxParallel, f.parallel)}
	}
	if flags.Changed("driver") {
		switch f.driver {
		case "auto", "actors", "sequential":
		default:
			return usageError{fmt.Sprintf("--driver: want auto, actors or sequential, got %q", f.driver)}
		}
	}
	sec, err := f.security.security()
	if err != nil {
		return err
	}
	runtime := func(rs *scenarios.RuntimeSpec) {
		if flags.Changed("driver") {
			rs.Driver = f.driver
		}
		if flags.Changed("parallel") {
			rs.Parallel = f.parallel
		}
		if flags.Changed("workers") {
			rs.Workers, rs.Driver = f.workers, "actors"
		}
	}
	// The progress display shows outer steps for runs that have them;
	// a scenario.yaml that does not load is Resume's error to report.
	outer := true
	if sc, err := scenarios.Load(filepath.Join(dir, "scenario.yaml")); err == nil {
		outer = sc.Outer.Steps > 0 // as hgpsim run decides it
		runtime(&sc.Runtime)
		boundHeap(scenarios.Estimate(sc))
	}
	log := newConsoleLog(stderr)
	return supervise(log, stderr, dir, outer, true, f.cpuprofile, func() {
		log.Info().Str("out", dir).Msg("resuming from the last checkpoint")
	}, func(ctx context.Context, opt run.Options) (*run.Summary, error) {
		opt.MaxMemory = f.mem.bytes
		opt.WorkerSecurity = sec
		return run.Resume(ctx, run.ResumeOptions{Options: opt, Runtime: runtime})
	})
}
