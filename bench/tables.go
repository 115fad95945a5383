package bench

import (
	"fmt"
	"io"
	"runtime"
)

// Options are the knobs of the table-writing measurements (`hgpsim
// bench`).
type Options struct {
	Clients []int // client counts
	// Procs are the GOMAXPROCS values, one table (or set of tables) each;
	// the caller's value is restored at the end.
	Procs []int
	// Rounds is the number of rounds per measurement; for WriteOuter the
	// cap on the SGP and hyper-gradient rounds measured.
	Rounds int
	Reps   int // measurements per driver (the median is reported)
	// Progress gets one line per setup measured; nil discards them.
	Progress io.Writer
}

func (o *Options) check() error {
	if len(o.Clients) == 0 || len(o.Procs) == 0 {
		return fmt.Errorf("bench: no client counts or GOMAXPROCS values")
	}
	for _, p := range o.Procs {
		if p < 1 {
			return fmt.Errorf("bench: GOMAXPROCS must be >= 1, got %d", p)
		}
	}
	if o.Rounds < 1 || o.Reps < 1 {
		return fmt.Errorf("bench: rounds and repetitions must be >= 1, got %d and %d", o.Rounds, o.Reps)
	}
	return nil
}

func (o *Options) progress(format string, a ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "bench: "+format+"\n", a...)
	}
}

// forProcs calls f with GOMAXPROCS set to each value of o.Procs in turn,
// after a "GOMAXPROCS=p" line, and restores the caller's value.
func (o *Options) forProcs(w io.Writer, f func(p int) error) error {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, p := range o.Procs {
		runtime.GOMAXPROCS(p)
		fmt.Fprintf(w, "\nGOMAXPROCS=%d\n", p)
		if err := f(p); err != nil {
			return err
		}
	}
	return nil
}

// WriteSGP measures SGP rounds (SGPRounds) at every client count and
// GOMAXPROCS value with each driver (Rounds.Compare) and writes one
// Markdown table per GOMAXPROCS value: rounds/s, ms/round, the
// time ratio to the one-goroutine sequential driver, allocations per round, setup and peak
// heap.
func WriteSGP(w io.Writer, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	fmt.Fprintf(w, "hgpsim bench: %d SGP rounds per measurement, median of %d alternating measurements per driver; %s\n",
		o.Rounds, o.Reps, Machine())
	return o.forProcs(w, func(p int) error {
		fmt.Fprintln(w, "\n| clients | driver | rounds/s | ms/round | time / sequential | allocs/round | setup heap MiB | peak heap MiB |")
		fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|")
		for _, n := range o.Clients {
			o.progress("GOMAXPROCS=%d, %d clients ...", p, n)
			settle()
			s, err := SGPRounds(n)
			if err != nil {
				return err
			}
			res, err := s.Compare(o.Rounds, o.Reps)
			if err != nil {
				return err
			}
			for k, m := range res {
				fmt.Fprintf(w, "| %d | %s |%s\n", n, m.Driver, cells(m, k, res[0]))
			}
		}
		return nil
	})
}

// WriteHyper measures HGP and VR-HGP rounds (HyperRounds) like WriteSGP
// and writes one table per GOMAXPROCS value with a row per client count,
// estimator and driver.
func WriteHyper(w io.Writer, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	fmt.Fprintf(w, "hgpsim bench --phase hgp: quickstart setup with the label-weights head on softmax (d_x = 105, d_λ = 5), "+
		"linearized after %d SGP rounds; %d hyper-gradient rounds per measurement (simultaneous sampling, batch 32), "+
		"median of %d alternating measurements per driver; %s\n", HGPWarmup, o.Rounds, o.Reps, Machine())
	return o.forProcs(w, func(p int) error {
		fmt.Fprintln(w, "\n| clients | estimator | driver | rounds/s | ms/round | time / sequential | allocs/round | setup heap MiB | peak heap MiB |")
		fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|---:|")
		for _, n := range o.Clients {
			o.progress("GOMAXPROCS=%d, %d clients ...", p, n)
			for _, est := range HyperEstimators {
				settle()
				s, err := HyperRounds(n, est)
				if err != nil {
					return err
				}
				res, err := s.Compare(o.Rounds, o.Reps)
				if err != nil {
					return err
				}
				for k, m := range res {
					fmt.Fprintf(w, "| %d | %s | %s |%s\n", n, est, m.Driver, cells(m, k, res[0]))
				}
			}
		}
		return nil
	})
}

// cells renders rounds/s, ms/round, the time ratio to the sequential
// result seq (k = 0 is the sequential driver itself), allocations per
// round and the heaps.
func cells(m Measurement, k int, seq Measurement) string {
	rel := "1 (yardstick)"
	if k > 0 {
		rel = fmt.Sprintf("%.2f", m.Wall.Seconds()/seq.Wall.Seconds())
	}
	return fmt.Sprintf(" %.1f | %.3f | %s | %.0f | %.1f | %.1f |",
		m.RoundsPerSecond(), m.MsPerRound(), rel, m.Allocs, mib(m.SetupHeap), mib(m.PeakHeap))
}
