package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// rootLong is the head of `hgpsim help`.
const rootLong = `hgpsim — decentralized bilevel optimization over unreliable networks.

Flags may come before or after the positional arguments
("hgpsim run FILE --out DIR" and "hgpsim run --out DIR FILE").

Exit codes:
  0    success
  1    a run failed
  2    invalid input: bad flags or arguments, unknown command, invalid scenario
  130  run or sweep stopped by SIGINT (Ctrl-C)
  143  run or sweep stopped by SIGTERM

SIGINT and SIGTERM stop a run cleanly: the round in progress finishes,
metrics.jsonl is flushed and summary.json is not written. A second
signal while stopping ends the process at once. A run stopped after its
first checkpoint (outer-step boundaries) continues with hgpsim resume DIR.`

// usageError is bad command-line input (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	os.Exit(runCLI(os.Args[1:], os.Stdout, os.Stderr))
}

// runCLI executes the command line args and returns the exit code. Errors are
// reported as one line on stderr, prefixed "hgpsim:".
func runCLI(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	// cobra reads os.Args when given nil, which under `go test` are the
	// test binary's flags.
	if args == nil {
		args = []string{}
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "hgpsim:", oneLine(err.Error()))
	var ie interrupted
	if errors.As(err, &ie) {
		return ie.exitCode()
	}
	var ue usageError
	if errors.As(err, &ue) {
		if cmd == nil || cmd.Name() == "help" {
			cmd = root
		}
		if cmd == root && len(args) == 0 {
			// A bare `hgpsim` gets the whole usage, not just a hint.
			root.SetOut(stderr)
			_ = root.Help()
			return 2
		}
		fmt.Fprintf(stderr, "run '%s --help' for usage\n", cmd.CommandPath())
		return 2
	}
	if scenarios.IsInvalid(err) {
		return 2
	}
	return 1
}

// newRootCmd builds the command tree. It is built afresh for every run, so
// tests do not share flag state.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "hgpsim",
		Short: "Decentralized bilevel optimization over unreliable networks",
		Long:  rootLong,
		// Errors are printed by run as one line; cobra would add the whole
		// usage block to every failed run.
		SilenceErrors: true,
		SilenceUsage:  true,
		// Without Args, cobra turns an unknown command into a multi-line
		// error; this keeps it on one line with the suggestion.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() || c.Name() == "help" {
					names = append(names, c.Name())
				}
			}
			msg := fmt.Sprintf("unknown command %q (commands: %s)", args[0], strings.Join(names, ", "))
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg = fmt.Sprintf("unknown command %q; did you mean %q?", args[0], s[0])
			}
			return usageError{msg}
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{"no command given"}
		},
	}
	root.SuggestionsMinimumDistance = 2 // what cobra uses for its own messages
	// root is runnable only so that a bare `hgpsim` exits with code 2;
	// its usage must not advertise running it without a command.
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "{{if .Runnable}}", "{{if and .Runnable .HasParent}}", 1))
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newHelpCmd(root))
	root.AddCommand(newRunCmd(stderr), newValidateCmd(stdout), newSweepCmd(stdout, stderr),
		newBenchCmd(stdout, stderr), newListCmd(stdout), newVersionCmd(stdout), newWorkerCmd(stdout, stderr),
		newResumeCmd(stderr), newReportCmd(stdout), newViewCmd(stdout, stderr))
	return root
}

// flagError makes flag parsing errors usage errors (exit code 2). The
// standard library's flag package, which hgpsim used before cobra, accepted
// "-out"; pflag reads that as the shorthands -o -u -t, so say what to type.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if _, arg, ok := strings.Cut(msg, "unknown shorthand flag: "); ok {
		if _, word, ok := strings.Cut(arg, " in -"); ok {
			name, _, _ := strings.Cut(word, "=")
			if cmd.Flags().Lookup(name) != nil {
				msg += fmt.Sprintf(" (long flags take two dashes: --%s)", name)
			}
		}
	}
	return usageError{msg}
}

// newHelpCmd replaces cobra's help command, which answers an unknown topic
// with exit code 0.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		// Shell completion of the topic, which cobra's help command has.
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, c := range root.Commands() {
				if c.IsAvailableCommand() && strings.HasPrefix(c.Name(), toComplete) {
					names = append(names, c.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usageError{fmt.Sprintf("unknown help topic %q", strings.Join(args, " "))}
			}
			return target.Help()
		},
	}
}

// exactlyOneFile is the positional-argument check of run and validate.
func exactlyOneFile(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Sprintf("%s needs exactly one scenario FILE, got %d arguments", cmd.Name(), len(args))}
	}
	return nil
}

func newValidateCmd(stdout io.Writer) *cobra.Command {
	var mem memoryFlag
	var sets setFlag
	var replay string
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a scenario file and exit",
		Long: `Check a scenario file without running it and without reading its data
files: strict decoding (a key that means nothing for the chosen kind is an
error), every field's range, an estimate of the memory and time the run
needs (refused above --max-memory), and the checks that need the network
(strong connectivity, link reciprocity), building it only for kinds that do
not guarantee them. A links trace (links kind trace, or --replay-links) is
read whole: every row is checked, the expected graph it realizes must meet
the same assumptions, and its statistics are printed (availability per link:
min, mean, max; the mean length of an outage).`,
		Args: exactlyOneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			all := sets.sets
			if replay != "" {
				set, err := run.ReplayLinks(replay)
				if err != nil {
					return usageError{"--replay-links: " + err.Error()}
				}
				all = append(append([]scenarios.Set(nil), all...), set)
			}
			return cmdValidate(args[0], all, mem.bytes, stdout)
		},
	}
	cmd.Flags().StringVar(&replay, "replay-links", "", "check the scenario with the links trace FILE in place of its link process, and report the trace's statistics")
	addMemoryFlag(cmd.Flags(), &mem)
	addSetFlag(cmd.Flags(), &sets)
	return cmd
}

func cmdValidate(file string, sets []scenarios.Set, maxMemory int64, stdout io.Writer) error {
	sc, err := scenarios.LoadWith(file, sets)
	if err != nil {
		return err
	}
	res, err := scenarios.Check(file, sc, scenarios.CheckOptions{MaxMemory: maxMemory})
	if err != nil {
		return err
	}
	what := fmt.Sprintf("algorithm %s", sc.Algorithm.Name)
	switch {
	case sc.Experiment != nil:
		what = fmt.Sprintf("experiment %s", sc.Experiment.Name)
	case sc.Algorithm.Name == "pdbo":
		what = fmt.Sprintf("%d SGP rounds", sc.SGP.Rounds)
	}
	links, err := reportLinksTrace(sc)
	if err != nil {
		return err
	}
	if links != "" && sc.Experiment == nil {
		// What only the run's schedule tells (a trace outlived): the
		// run's own build checks it, without loading data.
		if _, err := run.Build(sc, run.Hosting(0, 0)); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s: valid (%d clients, %s network, %s); needs %s\n",
		file, sc.Clients, sc.Network.Topology.Name, what, res)
	if links != "" {
		fmt.Fprintln(stdout, links)
	}
	for _, w := range scenarios.Warnings(sc) {
		fmt.Fprintln(stdout, "warning: "+w)
	}
	for k, f := range sc.Network.Failures {
		if f.Params.Breaks() {
			fmt.Fprintf(stdout, "note: network.failures[%d] (%s) can leave the network without strong connectivity for a while (Assumption 2); that is allowed\n", k, f.Name)
		}
	}
	return nil
}

// reportLinksTrace returns the statistics of the scenario's links trace,
// if it has one, having checked the expected graph it realizes (building
// the network reads the whole trace).
func reportLinksTrace(sc scenarios.Scenario) (string, error) {
	if l, ok := sc.Network.Topology.Params.(interface {
		Links() registry.Choice[graph.LinkProcess]
	}); !ok || l.Links().Name != "trace" {
		return "", nil // no trace process: nothing to read
	}
	nw, err := scenarios.BuildNetwork(sc)
	if err != nil {
		return "", err
	}
	tr, ok := nw.Process.(graph.LinkTrace)
	if !ok {
		return "", nil
	}
	sum, err := graph.ScanTrace(tr.File(), nw.N, true)
	if err != nil {
		return "", scenarios.Invalid("links trace", "%v", err)
	}
	return fmt.Sprintf("links trace %s: %s; the expected graph it realizes is strongly connected with every link in both directions", tr.File(), sum), nil
}

// runFlags are the flags of `hgpsim run`.
type runFlags struct {
	out        string
	seed       uint64
	mem        memoryFlag
	set        setFlag
	workers    []string
	cpuprofile string
	record     string // --record-links
	replay     string // --replay-links
	security   securityFlags
}

func newRunCmd(stderr io.Writer) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a scenario",
		Long: `Run a scenario and write scenario.yaml (resolved), metrics.jsonl and
summary.json to the output folder. summary.json is written last and
atomically: if it exists, the run completed.

SIGINT (Ctrl-C) or SIGTERM stops the run after the current round, with
metrics.jsonl complete up to there and no summary.json; the exit code is
130 or 143. A second signal ends the process at once.

At outer-step boundaries (every runtime.checkpoint_every) the run replaces
checkpoint.bin in the output folder; a run stopped or killed after one
continues, byte-identically, with hgpsim resume DIR (docs/checkpoint.md).`,
		Args: exactlyOneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdRun(args[0], f, cmd.Flags().Changed("seed"), cmd.Flags().Changed("workers"), stderr)
		},
	}
	cmd.Flags().StringSliceVar(&f.workers, "workers", nil, "worker processes to host the clients, host:port,... (overrides runtime.workers and selects the actor driver; see hgpsim worker)")
	cmd.Flags().StringVar(&f.out, "out", "", "output folder (default runs/<name>-<timestamp>)")
	cmd.Flags().Uint64Var(&f.seed, "seed", 0, "override the scenario seed")
	cmd.Flags().StringVar(&f.record, "record-links", "", "write the links realized in every round to FILE (*.csv.gz or *.jsonl.gz; docs/scenarios.md) and links.png to the output folder")
	cmd.Flags().StringVar(&f.replay, "replay-links", "", "replay the link states of a links trace FILE (a recording or measured data) in place of the scenario's link process; the failure processes still apply")
	cmd.Flags().StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the run to FILE (go tool pprof FILE)")
	addMemoryFlag(cmd.Flags(), &f.mem)
	addSetFlag(cmd.Flags(), &f.set)
	addSecurityFlags(cmd.Flags(), &f.security)
	return cmd
}

func cmdRun(file string, f runFlags, seedSet, workersSet bool, stderr io.Writer) error {
	sets := f.set.sets
	if f.record != "" {
		if err := run.CheckRecordPath(f.record); err != nil {
			return usageError{"--record-links: " + err.Error()}
		}
	}
	if f.replay != "" {
		set, err := run.ReplayLinks(f.replay)
		if err != nil {
			return usageError{"--replay-links: " + err.Error()}
		}
		sets = append(append([]scenarios.Set(nil), sets...), set)
	}
	sc, err := scenarios.LoadWith(file, sets)
	if err != nil {
		if f.replay != "" {
			return fmt.Errorf("--replay-links: %w (the network kind must have random links: a links key)", err)
		}
		return err
	}
	if seedSet {
		sc.Seed = f.seed
	}
	if workersSet {
		if err := scenarios.ValidateWorkers(f.workers); err != nil {
			return usageError{"--workers: " + err.Error()}
		}
		// Worker processes host actors: the flag chooses that driver.
		sc.Runtime.Workers, sc.Runtime.Driver = f.workers, "actors"
	}
	// Refuse what cannot fit before anything is written or logged.
	res, err := scenarios.Check(file, sc, scenarios.CheckOptions{MaxMemory: f.mem.bytes})
	if err != nil {
		return err
	}
	boundHeap(res)
	sec, err := f.security.security()
	if err != nil {
		return err
	}
	dir := f.out
	if dir == "" {
		dir = run.DefaultOutDir(sc.Name, time.Now())
	}
	log := newConsoleLog(stderr)
	return supervise(log, stderr, dir, sc.Outer.Steps > 0, false, f.cpuprofile, func() {
		log.Info().Str("scenario", file).Str("out", dir).Uint64("seed", sc.Seed).Msg("run started")
	}, func(ctx context.Context, opt run.Options) (*run.Summary, error) {
		opt.MaxMemory = f.mem.bytes
		opt.RecordLinks = f.record
		opt.WorkerSecurity = sec
		return run.Execute(ctx, sc, opt)
	})
}

// supervise runs exec (a run or a resumed run writing into dir) with the
// console's progress display, stops it cleanly on SIGINT/SIGTERM, writes
// a CPU profile when asked, and logs the outcome.
// resumable says whether dir holds a checkpoint already (a resumed run).
func supervise(log zerolog.Logger, stderr io.Writer, dir string, outer, resumable bool, cpuprofile string, started func(),
	exec func(context.Context, run.Options) (*run.Summary, error)) error {
	tty := false
	if fd, ok := stderr.(*os.File); ok {
		tty = isatty.IsTerminal(fd.Fd())
	}
	pp := newProgressPrinter(log, stderr, tty, outer)
	var checkpointed atomic.Bool // read by the signal handler
	checkpointed.Store(resumable)
	ctx, sigs := notifyStop(context.Background(), func(sig os.Signal) {
		pp.notice(func() {
			msg := "stopping after the current round; no summary.json will be written; a second signal kills at once"
			if checkpointed.Load() {
				msg += "; continue with: hgpsim resume " + dir
			}
			log.Warn().Str("signal", signalName(sig)).Msg(msg)
		})
	})
	defer sigs.stop()

	if cpuprofile != "" {
		pf, err := os.Create(cpuprofile)
		if err != nil {
			return usageError{fmt.Sprintf("--cpuprofile: %v", err)}
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	started()
	sum, err := exec(ctx, run.Options{OutDir: dir, Progress: pp.event,
		Checkpointed: func(ci run.CheckpointInfo) {
			if !checkpointed.Swap(true) && !resumable {
				pp.notice(func() {
					log.Info().Str("path", ci.Path).Int64("bytes", ci.Bytes).Str("took", ci.Took.Round(time.Millisecond).String()).
						Msg("first checkpoint written (replaced at every checkpoint; resume a stopped run with hgpsim resume)")
				})
			}
		},
		Warn: func(msg string) {
			pp.notice(func() { log.Warn().Msg(msg) })
		}})
	pp.finish()
	if err != nil {
		if checkpointed.Load() && !scenarios.IsInvalid(err) {
			err = fmt.Errorf("%w (the last checkpoint stays in %s: hgpsim resume %s)", err, dir, dir)
		}
		return sigs.wrap(err)
	}
	if h, ok := sum.Experiment.(interface{ Headlines() []string }); ok {
		for _, line := range h.Headlines() {
			log.Info().Msg(line)
		}
	}
	logFinished(log, sum, time.Since(start), dir)
	return nil
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
