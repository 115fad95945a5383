// Command hgpsim runs scenario simulations of decentralized bilevel
// optimization over unreliable networks.
//
//	hgpsim run FILE [--out DIR] [--seed N]   run a scenario
//	hgpsim validate FILE                    check a scenario and exit
//	hgpsim sweep FILE... [--methods a,b]     run many and tabulate
//	hgpsim bench [flags]                    SGP, HGP and outer-step costs of both drivers
//
// Exit codes: 0 success, 1 a run that failed, 2 invalid input.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"hgpsim/optim"
	"hgpsim/scenarios"
)

const usage = `hgpsim — decentralized bilevel optimization over unreliable networks

usage:
  hgpsim run FILE [--out DIR] [--seed N]   run a scenario; outputs go to DIR
                                           (default runs/<name>-<timestamp>)
  hgpsim validate FILE                    check a scenario file and exit
  hgpsim sweep FILE... [--methods a,b] [--out DIR] [--jobs N] [--seed N]
                                          run scenarios (× methods) in parallel and write
                                          results.md / results.csv / validation.png
  hgpsim bench [--clients 10,100,1000] [--rounds R] [--procs 1,2] [--reps N] [--phase sgp|hgp|outer]
               [--methods pdbo-da,...] [--scenario FILE] [--out FILE]
                                          rounds per second, actor vs sequential, outer-step split
                                          (docs/performance.md)

exit codes: 0 success, 1 run failed, 2 invalid input
`

// usageError is bad command-line input (exit code 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "hgpsim:", oneLine(err.Error()))
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprint(stderr, "run 'hgpsim help' for usage\n")
		return 2
	}
	if scenarios.IsInvalid(err) {
		return 2
	}
	return 1
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command given"}
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stderr)
	case "validate":
		return cmdValidate(args[1:], stdout)
	case "bench":
		return cmdBench(args[1:], stdout, stderr)
	case "sweep":
		return cmdSweep(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageError{fmt.Sprintf("unknown command %q (commands: run, validate, sweep, bench, help)", args[0])}
}

// parse parses flags that may come before or after the positional
// arguments ("run FILE --out DIR" as well as "run --out DIR FILE").
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

func cmdValidate(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"validate needs exactly one scenario FILE"}
	}
	sc, err := scenarios.Load(pos[0])
	if err != nil {
		return err
	}
	// Build also checks what needs the network (connectivity, Assumption 6).
	if _, err := scenarios.Build(sc); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: valid (%d clients, %s network, %d SGP rounds)\n", pos[0], sc.Clients, sc.Network.Topology.Name, sc.SGP.Rounds)
	return nil
}

func cmdRun(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	out := fs.String("out", "", "output folder (default runs/<name>-<timestamp>)")
	seed := fs.String("seed", "", "override the scenario seed")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"run needs exactly one scenario FILE"}
	}
	sc, err := scenarios.Load(pos[0])
	if err != nil {
		return err
	}
	if err := applySeed(&sc, *seed); err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = scenarios.DefaultOutDir(sc.Name, time.Now())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	log := zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: true, TimeFormat: time.TimeOnly}).With().Timestamp().Logger()
	tty := false
	if f, ok := stderr.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	start := time.Now()
	log.Info().Str("scenario", pos[0]).Str("out", dir).Uint64("seed", sc.Seed).Msg("run started")
	progress := func(ev optim.RoundEvent, agg scenarios.Aggregate, total int) {
		if ev.Phase != "sgp" {
			log.Info().Str("phase", ev.Phase).Int("round", ev.Round+1).Int("of", total).
				Int64("messages", ev.Traffic.Messages).Msg("progress")
			return
		}
		if tty {
			drawBar(stderr, ev.Round+1, total, agg)
			return
		}
		log.Info().Str("phase", ev.Phase).Int("round", ev.Round+1).Int("of", total).
			Float64("train_loss", agg.TrainLoss).Float64("test_acc", agg.TestAcc).
			Float64("consensus", agg.Consensus).Msg("progress")
	}
	sum, err := scenarios.Execute(ctx, sc, scenarios.Options{OutDir: dir, Progress: progress})
	if tty {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	if sum.HGPError != nil {
		for _, f := range sum.HGPError.Final {
			log.Info().Str("network", f.Network).Float64("alpha", f.Alpha).Float64("beta", f.Beta).
				Float64("median_error", f.Median).Float64("p10", f.P10).Float64("p90", f.P90).Msg("error at m = M")
		}
		log.Info().Dur("wall", time.Since(start).Round(time.Millisecond)).Str("out", dir).Msg("run finished")
		return nil
	}
	log.Info().Dur("wall", time.Since(start).Round(time.Millisecond)).
		Float64("train_loss", sum.Final.TrainLoss).Float64("test_acc", sum.Final.TestAcc).
		Float64("test_acc_p10", sum.Final.TestAccP).Float64("consensus", sum.Final.Consensus).
		Str("summary", dir+"/summary.json").Msg("run finished")
	return nil
}

func drawBar(w io.Writer, done, total int, agg scenarios.Aggregate) {
	const width = 30
	k := done * width / total
	fmt.Fprintf(w, "\r[%s%s] %d/%d  loss %.4f  test acc %.3f  consensus %.2e ",
		strings.Repeat("#", k), strings.Repeat(".", width-k), done, total, agg.TrainLoss, agg.TestAcc, agg.Consensus)
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// applySeed overrides the scenario seed with the --seed flag, if given.
func applySeed(sc *scenarios.Scenario, flagValue string) error {
	if flagValue == "" {
		return nil
	}
	s, err := strconv.ParseUint(flagValue, 10, 64)
	if err != nil {
		return usageError{fmt.Sprintf("--seed must be a non-negative integer, got %q", flagValue)}
	}
	sc.Seed = s
	return nil
}
