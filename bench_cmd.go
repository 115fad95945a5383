package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"hgpsim/bench"
	"hgpsim/scenarios"
)

// benchFlags are the flags of `hgpsim bench`.
type benchFlags struct {
	phase    string
	clients  string
	rounds   int
	procs    string
	reps     int
	out      string
	scenario string
	methods  string
	json     bool
	dump     string
	f32      bool
}

// newBenchCmd is `hgpsim bench`: it parses the flags and leaves the
// measuring to package bench.
func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Rounds per second of each driver (sequential, parallel, actors), and the split of an outer step",
		Long: `Measure the sequential and the actor driver and print Markdown tables
(docs/performance.md). --phase selects what is timed:

  sgp    SGP rounds on the quickstart setup (softmax, 20 features, 5 classes,
         150 training examples per client, batch 32, stochastic directed
         network with link probabilities ~ U[0.4, 0.8])
  hgp    HGP and VR-HGP rounds on the same setup with the label-weights head,
         linearized after 50 SGP rounds
  outer  one PDBO outer step of --scenario run by its program (Alg. 1), split
         into SGP rounds, evaluation, linearization, hyper-gradient rounds and
         λ-update
  ops    single operations on one goroutine (softmax and MLP gradient and
         HVP, one client's VR-HGP round), the shapes of the PyTorch
         yardstick tools/yardstick/torch_ops.py; --json prints them as JSON
         lines for tools/yardstick/compare.py
  nets   gradient and HVP of the convolutional presets of models/nn
         (fedem-cnn, also at 62 classes, fedbio-4conv, node-weighting on
         1×28×28, lenet on 3×32×32; batch 128, cross-entropy) on one
         goroutine, in ms and GFLOP/s (3 forward passes per gradient, 8 per
         HVP); --dump DIR writes each net's parameters, data, direction,
         gradient and HVP for tools/yardstick/torch_nets.py; --f32 also
         times each in float32; --json as for ops

Some defaults depend on --phase, as each flag's help says. The Go benchmarks
of the same setups are in package bench (go test -bench . ./bench).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Sprintf("bench takes no positional arguments, got %q", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdBench(f, cmd.Flags().Changed, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.phase, "phase", "sgp", "what to time: sgp | hgp | outer | ops | nets")
	fl.BoolVar(&f.json, "json", false, "ops, nets: print one JSON object per op instead of a table")
	fl.StringVar(&f.dump, "dump", "", "nets: write each net's inputs and results into DIR/NAME for tools/yardstick/torch_nets.py")
	fl.BoolVar(&f.f32, "f32", false, "nets: also time each op in float32 (ms_f32 and gflops_f32 with --json)")
	fl.StringVar(&f.clients, "clients", "10,100,1000", "comma-separated client counts (default 10,100 for --phase hgp, 20,100 for outer)")
	fl.IntVar(&f.rounds, "rounds", 200, "rounds per measurement (outer: at most this many SGP and hyper-gradient rounds, at least 3, default 30; the rest is extrapolated)")
	fl.StringVar(&f.procs, "procs", strconv.Itoa(runtime.GOMAXPROCS(0)), "comma-separated GOMAXPROCS values")
	fl.IntVar(&f.reps, "reps", 3, "measurements per driver and client count (the median is reported; default 1 for outer)")
	fl.StringVar(&f.out, "out", "", "also write the tables to FILE")
	fl.StringVar(&f.scenario, "scenario", bench.DefaultScenario, "outer: the scenario file whose outer step is timed")
	fl.StringVar(&f.methods, "methods", "pdbo-da,pdbo-mtl-da", "outer: comma-separated methods (pdbo-*)")
	return cmd
}

// cmdBench checks the flags, applies the phase's defaults to those not
// given (set reports the flags given on the command line), runs the
// measurement of package bench and prints its tables.
func cmdBench(f benchFlags, set func(name string) bool, stdout, stderr io.Writer) error {
	if f.json && f.phase != "ops" && f.phase != "nets" {
		return usageError{"--json only applies to --phase ops and nets"}
	}
	if f.dump != "" && f.phase != "nets" {
		return usageError{"--dump only applies to --phase nets"}
	}
	if f.f32 && f.phase != "nets" {
		return usageError{"--f32 only applies to --phase nets"}
	}
	switch f.phase {
	case "ops", "nets":
		return cmdBenchOps(f, set, stdout, stderr)
	case "sgp":
	case "hgp":
		if !set("clients") {
			f.clients = "10,100"
		}
	case "outer":
		if !set("clients") {
			f.clients = "20,100"
		}
		if !set("rounds") {
			f.rounds = 30
		}
		if !set("reps") {
			f.reps = 1
		}
	default:
		return usageError{fmt.Sprintf("--phase must be sgp, hgp, outer, ops or nets, got %q", f.phase)}
	}
	if f.phase != "outer" && (set("scenario") || set("methods")) {
		return usageError{"--scenario and --methods only apply to --phase outer"}
	}
	clients, err := intList("clients", f.clients, 2, 10000)
	if err != nil {
		return err
	}
	procs, err := intList("procs", f.procs, 1, 1024)
	if err != nil {
		return err
	}
	minRounds := 1
	if f.phase == "outer" {
		minRounds = 3 // a round's cost is measured over the rounds that neither enter nor evaluate
	}
	if f.rounds < minRounds {
		return usageError{fmt.Sprintf("--rounds must be >= %d, got %d", minRounds, f.rounds)}
	}
	if f.reps < 1 {
		return usageError{fmt.Sprintf("--reps must be >= 1, got %d", f.reps)}
	}
	var methods []string
	for _, m := range strings.Split(f.methods, ",") {
		m = strings.TrimSpace(m)
		if !bench.ValidMethod(m) {
			return usageError{fmt.Sprintf("--methods must list pdbo-* methods (%v), got %q", scenarios.Methods, m)}
		}
		methods = append(methods, m)
	}

	var doc strings.Builder
	o := bench.Options{Clients: clients, Procs: procs, Rounds: f.rounds, Reps: f.reps, Progress: stderr}
	switch f.phase {
	case "hgp":
		err = bench.WriteHyper(&doc, o)
	case "outer":
		err = bench.WriteOuter(&doc, bench.OuterOptions{Options: o, Scenario: f.scenario, Methods: methods})
	default:
		err = bench.WriteSGP(&doc, o)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(&doc, "\npeak RSS of the process (VmHWM): %s\n", bench.PeakRSS())
	fmt.Fprint(stdout, doc.String())
	if f.out != "" {
		if err := os.WriteFile(f.out, []byte(doc.String()), 0o644); err != nil {
			return fmt.Errorf("writing the tables: %w", err)
		}
	}
	return nil
}

// intList parses a comma-separated list of integers in [lo, hi] given to
// flag --name.
func intList(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < lo || v > hi {
			return nil, usageError{fmt.Sprintf("--%s must be a comma-separated list of integers in [%d, %d], got %q", name, lo, hi, s)}
		}
		out = append(out, v)
	}
	return out, nil
}

// cmdBenchOps times the yardstick's single operations (--phase ops) or
// the nets' gradients and HVPs (--phase nets) on one goroutine.
func cmdBenchOps(f benchFlags, set func(name string) bool, stdout, stderr io.Writer) error {
	for _, name := range []string{"clients", "rounds", "procs", "scenario", "methods"} {
		if set(name) {
			return usageError{fmt.Sprintf("--%s does not apply to --phase %s", name, f.phase)}
		}
	}
	if f.reps < 1 {
		return usageError{fmt.Sprintf("--reps must be >= 1, got %d", f.reps)}
	}
	runtime.GOMAXPROCS(1) // as the yardstick's torch.set_num_threads(1)
	var rows []any
	var table func(w io.Writer)
	if f.phase == "nets" {
		times, err := bench.MeasureNets(bench.NetOptions{Reps: f.reps, Budget: 500 * time.Millisecond, Dump: f.dump, Progress: stderr, Float32: f.f32})
		if err != nil {
			return err
		}
		for _, t := range times {
			rows = append(rows, t)
		}
		table = func(w io.Writer) { bench.WriteNets(w, times) }
	} else {
		ops, err := bench.Ops()
		if err != nil {
			return err
		}
		times := bench.TimeOps(ops, f.reps, 500*time.Millisecond)
		for _, t := range times {
			rows = append(rows, t)
		}
		table = func(w io.Writer) { bench.WriteOps(w, times) }
	}
	var doc strings.Builder
	if f.json {
		for _, t := range rows {
			b, err := json.Marshal(t)
			if err != nil {
				return err
			}
			doc.Write(append(b, '\n'))
		}
	} else {
		table(&doc)
	}
	fmt.Fprint(stdout, doc.String())
	if f.out != "" {
		return os.WriteFile(f.out, []byte(doc.String()), 0o644)
	}
	return nil
}
