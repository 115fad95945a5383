package bench

import (
	"fmt"
	"io"
	"strings"
	"time"

	"hgpsim/scenarios"
)

// OuterOptions are the knobs of WriteOuter.
type OuterOptions struct {
	Options
	Scenario string   // scenario file (DefaultScenario if empty)
	Methods  []string // pdbo-* methods
}

// WriteOuter measures one outer step of the scenario for every GOMAXPROCS
// value, client count and method with each driver (Outer.Compare) and
// writes, per setup, a Markdown table of the parts, the extrapolation to
// the scenario's rounds and the whole run, and at the end a summary table.
func WriteOuter(w io.Writer, o OuterOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	if len(o.Methods) == 0 {
		return fmt.Errorf("bench: no methods")
	}
	file := o.Scenario
	if file == "" {
		file = DefaultScenario
	}
	base, note, err := LoadScenario(file)
	if err != nil {
		return err
	}
	data := base.Data.Source.Name
	if note != "" {
		data = "synthetic (fallback)"
		note = " " + note
	}
	fmt.Fprintf(w, "hgpsim bench --phase outer: %s (data %s), one outer step at s = 0 run by the scenario's program "+
		"(run.Build, Alg. 1) through the driver with a timing sink: at most %d SGP and %d hyper-gradient rounds measured, "+
		"the rest extrapolated linearly per round; median of %d measurements per driver (drivers alternate); %s.%s\n",
		file, data, o.Rounds, o.Rounds, o.Reps, Machine(), note)
	var summary strings.Builder
	err = o.forProcs(w, func(p int) error {
		for _, n := range o.Clients {
			for _, m := range o.Methods {
				o.progress("GOMAXPROCS=%d, %d clients, %s ...", p, n, m)
				settle()
				out, err := NewOuter(base, m, n, o.Rounds)
				if err != nil {
					return fmt.Errorf("bench %s, %d clients: %w", m, n, err)
				}
				res, err := out.Compare(o.Reps)
				if err != nil {
					return err
				}
				out.writeTable(w, res)
				out.summaryRow(&summary, p, res)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSummary (ms unless stated; shares of the sequential step):\n\n")
	fmt.Fprintln(w, "| GOMAXPROCS | n | method | SGP / round (seq / par / actors) | HGP / round (seq / par / actors) | HGP round / SGP round (seq) | "+
		"evaluation (seq / par / actors) | linearization (seq / par / actors) | λ-update (seq / par / actors) | outer step at T, M (seq / par / actors) | "+
		"time / sequential (par / actors) | share SGP / evaluation / linearization + HGP (seq) | whole run at S (seq / par / actors) |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	fmt.Fprint(w, summary.String())
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// shares returns the shares of the SGP rounds, the evaluations and the
// hyper-gradient phase (linearization and rounds) in the extrapolated
// step, in percent.
func (o *Outer) shares(p OuterParts) (sgp, eval, hyper float64) {
	step := float64(o.StepAt(p))
	ev := float64(evals(o.T, o.SGPEval)) * float64(p.SGP.Eval)
	return 100 * (float64(o.SGPAt(p)) - ev) / step, 100 * ev / step, 100 * float64(o.HyperAt(p)) / step
}

func (o *Outer) writeTable(w io.Writer, res []OuterParts) {
	r := o.Run
	sc := r.Scenario
	trainN, fullBatch := 0, ""
	for _, d := range r.Data {
		trainN += d.Train.N
		if d.Train.N <= max(sc.SGP.Batch, sc.Hypergradient.Batch) {
			fullBatch = ", full batch on clients with fewer examples"
		}
	}
	n := r.Net.N
	fmt.Fprintf(w, "\n%d clients, %s (head %s, estimator %s): d_x = %d, d_λ = %d, %.0f training examples per client on average, "+
		"batch %d (SGP) / %d (HGP)%s; measured T' = %d of T = %d SGP rounds and M' = %d of M = %d hyper-gradient rounds; "+
		"building the run (data, network) took %.1f s.\n\n",
		n, o.Method, sc.Model.Head.Name, sc.Hypergradient.Estimator, r.Model.DimX(), r.Model.DimLambda(),
		float64(trainN)/float64(n), sc.SGP.Batch, sc.Hypergradient.Batch, fullBatch, o.TM, o.T, o.MM, o.M, o.Build.Seconds())
	fmt.Fprintln(w, "| driver | SGP ms/round | SGP phase ms (T') | evaluation ms | linearization ms | HGP ms/round | hyper-gradient phase ms (M') | λ-update ms | outer step ms, measured | outer step s at T, M (extrapolated) | SGP / evaluation / linearization + HGP share at T, M | time / sequential at T, M |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
	for d, p := range res {
		rel := "1 (yardstick)"
		if d > 0 {
			rel = fmt.Sprintf("%.2f", float64(o.StepAt(p))/float64(o.StepAt(res[0])))
		}
		sg, ev, hy := o.shares(p)
		fmt.Fprintf(w, "| %s | %.2f | %.0f | %.1f | %.1f | %.2f | %.0f | %.2f | %.0f | %.2f | %.0f %% / %.1f %% / %.0f %% | %s |\n",
			p.Driver, ms(p.SGP.PerRound), ms(p.SGP.Wall), ms(p.SGP.Eval), ms(p.Hyper.Enter), ms(p.Hyper.PerRound),
			ms(p.Hyper.Wall), ms(p.Outer.Wall), ms(p.Measured()), o.StepAt(p).Seconds(), sg, ev, hy, rel)
	}
	fmt.Fprintf(w, "\nWhole run at S = %d outer steps, extrapolated ((S+1)·SGP phase + S·(hyper-gradient phase + λ-update)):", o.Steps)
	for _, p := range res {
		fmt.Fprintf(w, " %s %.0f s;", p.Driver, o.RunAt(p).Seconds())
	}
	fmt.Fprintf(w, " evaluation and linearization timed inside the sequential driver's clients "+
		"(exact there, as its clients run one after another): %.1f / %.1f ms.\n",
		ms(res[0].SGP.ObserveClient), ms(res[0].Hyper.EnterClient))
}

func (o *Outer) summaryRow(w io.Writer, procs int, res []OuterParts) {
	s := res[0]
	sg, ev, hy := o.shares(s)
	ratio := "—"
	if s.SGP.PerRound > 0 {
		ratio = fmt.Sprintf("%.1f", float64(s.Hyper.PerRound)/float64(s.SGP.PerRound))
	}
	// each joins one quantity over the drivers, in the order of Drivers.
	eachOf := func(res []OuterParts, format string, get func(OuterParts) float64) string {
		parts := make([]string, len(res))
		for d, p := range res {
			parts[d] = fmt.Sprintf(format, get(p))
		}
		return strings.Join(parts, " / ")
	}
	each := func(format string, get func(OuterParts) float64) string { return eachOf(res, format, get) }
	fmt.Fprintf(w, "| %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f %% / %.1f %% / %.0f %% | %s |\n",
		procs, o.Run.Net.N, o.Method,
		each("%.1f", func(p OuterParts) float64 { return ms(p.SGP.PerRound) }),
		each("%.1f", func(p OuterParts) float64 { return ms(p.Hyper.PerRound) }), ratio,
		each("%.1f", func(p OuterParts) float64 { return ms(p.SGP.Eval) }),
		each("%.1f", func(p OuterParts) float64 { return ms(p.Hyper.Enter) }),
		each("%.2f", func(p OuterParts) float64 { return ms(p.Outer.Wall) }),
		each("%.1f s", func(p OuterParts) float64 { return o.StepAt(p).Seconds() }),
		eachOf(res[1:], "%.2f", func(p OuterParts) float64 { return float64(o.StepAt(p)) / float64(o.StepAt(s)) }),
		sg, ev, hy,
		each("%.0f s", func(p OuterParts) float64 { return o.RunAt(p).Seconds() }))
}

// ValidMethod reports whether m is a method WriteOuter can measure: a
// pdbo-* method of scenarios.Methods.
func ValidMethod(m string) bool {
	return strings.HasPrefix(m, "pdbo-") && scenarios.Methods.Has(m)
}
