package experiments

// The FBO table's results: the cells over their seeds, the tables and
// claims written, the per-iteration accuracies.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"hgpsim/report"
)

// FBOTableSummary is summary.json.
type FBOTableSummary struct {
	Rounds  int            `json:"rounds"`
	Seeds   int            `json:"seeds"`
	Targets []float64      `json:"targets"`
	Cells   []FBOTableCell `json:"cells"`
}

// FBOTableCell is one configuration over its seeds.
type FBOTableCell struct {
	Method string  `json:"method"`
	Split  string  `json:"split"`
	Tau    int     `json:"tau"`
	Loss   float64 `json:"upload_loss"`
	// ToTarget[k] are the rounds at which each seed first reached
	// Targets[k] (-1: never within the budget).
	ToTarget [][]int   `json:"rounds_to_target"`
	Bytes    [][]int64 `json:"bytes_to_target"`
	// Iters[k] are the outer iterations at those rounds (-1: never).
	Iters [][]int   `json:"iterations_to_target"`
	Final []float64 `json:"final_acc"`
	RPI   int       `json:"rounds_per_outer_iteration"`
}

func (e *FBOTable) summarize(cells []*fboCell) *FBOTableSummary {
	s := &FBOTableSummary{Rounds: e.Rounds, Seeds: e.Seeds, Targets: e.Targets}
	for _, c := range cells {
		tc := FBOTableCell{Method: c.Method, Split: c.Split, Tau: c.Tau, Loss: c.Loss, RPI: e.roundsPerIter(c.Method)}
		for _, t := range e.Targets {
			var rs []int
			var bs []int64
			for _, r := range c.runs {
				at, b := -1, int64(-1)
				for k, a := range r.acc {
					if a >= t {
						at, b = r.rounds[k], r.bytes[k]
						break
					}
				}
				rs, bs = append(rs, at), append(bs, b)
			}
			tc.ToTarget = append(tc.ToTarget, rs)
			tc.Bytes = append(tc.Bytes, bs)
			its := make([]int, len(rs))
			for k, r := range rs {
				its[k] = -1
				if r >= 0 {
					its[k] = r / tc.RPI
				}
			}
			tc.Iters = append(tc.Iters, its)
		}
		for _, r := range c.runs {
			if len(r.acc) > 0 {
				tc.Final = append(tc.Final, r.acc[len(r.acc)-1])
			}
		}
		s.Cells = append(s.Cells, tc)
	}
	return s
}

// meanSD returns the mean and the sample standard deviation.
func meanSD(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	if len(v) == 1 {
		return m, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)-1))
}

// markdown renders the table of the loss-free runs (Table 2's shape) or of
// the upload-loss runs beside their loss-free counterparts.
func (e *FBOTable) markdown(s *FBOTableSummary, loss bool) string {
	var b strings.Builder
	b.WriteString("| method | rounds/outer it. | data | τ |")
	if loss {
		b.WriteString(" upload loss |")
	}
	for _, t := range e.Targets {
		fmt.Fprintf(&b, " rounds to %g%% |", 100*t)
	}
	b.WriteString(" final accuracy (%) |\n|---|---|---|---|")
	if loss {
		b.WriteString("---|")
	}
	b.WriteString(strings.Repeat("---|", len(e.Targets)+1) + "\n")
	for _, c := range s.Cells {
		if loss {
			if !(c.Loss > 0 || (c.Tau == e.LossTau && slices.Contains(e.LossSplits, c.Split))) {
				continue
			}
		} else if c.Loss > 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d |", c.Method, c.RPI, c.Split, c.Tau)
		if loss {
			fmt.Fprintf(&b, " %g |", c.Loss)
		}
		for k := range e.Targets {
			b.WriteString(" " + roundsCell(c.ToTarget[k]) + " |")
		}
		m, sd := meanSD(c.Final)
		fmt.Fprintf(&b, " %.2f ± %.2f |\n", 100*m, 100*sd)
	}
	return b.String()
}

// roundsCell is mean ± sd over the seeds that reached the target, with the
// count when some did not.
func roundsCell(rs []int) string {
	var got []float64
	for _, r := range rs {
		if r >= 0 {
			got = append(got, float64(r))
		}
	}
	if len(got) == 0 {
		return "not reached"
	}
	m, sd := meanSD(got)
	s := fmt.Sprintf("%.0f ± %.0f", m, sd)
	if len(got) < len(rs) {
		s += fmt.Sprintf(" (%d of %d seeds)", len(got), len(rs))
	}
	return s
}

// claims renders the loss-free cells for the claims table: rounds and
// outer iterations to each target and the final accuracy as mean ± the
// half-width of the 95 % Student-t interval over the seeds (a target some
// seed missed is reported as such), and, per split and τ, FBO-AggITD
// against FedNest paired by seed.
func (e *FBOTable) claims(s *FBOTableSummary) string {
	var b strings.Builder
	b.WriteString("| method | data | τ |")
	for _, t := range e.Targets {
		fmt.Fprintf(&b, " rounds to %g%% | outer its. to %g%% |", 100*t, 100*t)
	}
	b.WriteString(" final accuracy (%) |\n|---|---|---|" + strings.Repeat("---|", 2*len(e.Targets)+1) + "\n")
	means := map[string]float64{}
	for _, c := range s.Cells {
		if c.Loss > 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d |", c.Method, c.Split, c.Tau)
		for k := range e.Targets {
			r, ok := intervalOf(c.ToTarget[k])
			it, _ := intervalOf(c.Iters[k])
			if !ok {
				b.WriteString(" not reached by every seed | |")
				continue
			}
			fmt.Fprintf(&b, " %.0f ± %.0f | %.1f ± %.1f |", r.Mean, r.Half, it.Mean, it.Half)
			means[fmt.Sprintf("%s/%s/%d/%d", c.Method, c.Split, c.Tau, k)] = r.Mean
		}
		f := report.MeanInterval(c.Final)
		fmt.Fprintf(&b, " %.2f ± %.2f |\n", 100*f.Mean, 100*f.Half)
	}
	b.WriteString("\nFBO-AggITD against FedNest, paired by seed (same data and initial model): the ratio FBO-AggITD / FedNest of their rounds and of their outer iterations to each target, and the difference of final accuracy, mean ± 95 % half-width:\n\n| data | τ |")
	for _, t := range e.Targets {
		fmt.Fprintf(&b, " rounds ratio to %g%% | iterations ratio to %g%% |", 100*t, 100*t)
	}
	b.WriteString(" final accuracy difference (points) |\n|---|---|" + strings.Repeat("---|", 2*len(e.Targets)+1) + "\n")
	for _, sp := range e.Splits {
		for _, tau := range e.Taus {
			ia, iF, ok := fboPair(len(s.Cells), func(k int) (string, string, int, float64) {
				c := &s.Cells[k]
				return c.Method, c.Split, c.Tau, c.Loss
			}, sp, tau)
			if !ok {
				continue
			}
			a, f := &s.Cells[ia], &s.Cells[iF]
			fmt.Fprintf(&b, "| %s | %d |", sp, tau)
			for k := range e.Targets {
				for _, pair := range [][2][]int{{a.ToTarget[k], f.ToTarget[k]}, {a.Iters[k], f.Iters[k]}} {
					r, ok := pairedRatio(pair[0], pair[1])
					if !ok {
						b.WriteString(" – |")
						continue
					}
					fmt.Fprintf(&b, " %.2f ± %.2f |", r.Mean, r.Half)
				}
			}
			var d []float64
			for k := range min(len(a.Final), len(f.Final)) {
				d = append(d, 100*(a.Final[k]-f.Final[k]))
			}
			di := report.MeanInterval(d)
			fmt.Fprintf(&b, " %+.2f ± %.2f |\n", di.Mean, di.Half)
		}
	}
	return b.String()
}

// fboPair finds, among n cells described by cell, the last FBO-AggITD and
// the last FedNest cell of split and tau without upload loss: the pair the
// paired comparisons are taken over. ok is false unless both exist.
func fboPair(n int, cell func(k int) (method, split string, tau int, loss float64), split string, tau int) (a, f int, ok bool) {
	a, f = -1, -1
	for k := range n {
		m, sp, t, loss := cell(k)
		if loss != 0 || sp != split || t != tau {
			continue
		}
		switch m {
		case "fbo-aggitd":
			a = k
		case "fednest":
			f = k
		}
	}
	return a, f, a >= 0 && f >= 0
}

// pairedRatio is report.MeanInterval of num[k]/den[k] over the seeds,
// false when a seed of either never reached the target.
func pairedRatio(num, den []int) (report.Interval, bool) {
	var r []float64
	for k := range min(len(num), len(den)) {
		if num[k] <= 0 || den[k] <= 0 {
			return report.Interval{}, false
		}
		r = append(r, float64(num[k])/float64(den[k]))
	}
	return report.MeanInterval(r), len(r) > 0
}

// intervalOf is report.MeanInterval of vs, false when some seed never
// reached the target (-1).
func intervalOf(vs []int) (report.Interval, bool) {
	f := make([]float64, len(vs))
	for k, v := range vs {
		if v < 0 {
			return report.Interval{}, false
		}
		f[k] = float64(v)
	}
	return report.MeanInterval(f), true
}

// perIterationMax is the last outer iteration iterations.md reports.
const perIterationMax = 40

// perIteration renders the progress per outer iteration: the test accuracy
// after iteration k of FedNest and FBO-AggITD (mean ± 95 % half-width over
// the seeds) and their difference paired by seed, at the iterations both
// evaluated, for each loss-free split and τ. Equal progress per iteration
// makes the ratio of rounds to a target the ratio of rounds per iteration.
func (e *FBOTable) perIteration(cells []*fboCell) string {
	var b strings.Builder
	b.WriteString("Test accuracy (%) after outer iteration k, mean ± 95 % half-width over the seeds; the difference FBO-AggITD − FedNest paired by seed.\n")
	for _, sp := range e.Splits {
		for _, tau := range e.Taus {
			ia, iF, ok := fboPair(len(cells), func(k int) (string, string, int, float64) {
				c := cells[k]
				return c.Method, c.Split, c.Tau, c.Loss
			}, sp, tau)
			if !ok {
				continue
			}
			a, f := cells[ia], cells[iF]
			accA, accF := e.accAt(a), e.accAt(f)
			fmt.Fprintf(&b, "\n%s, τ = %d:\n\n| k | FedNest | FBO-AggITD | difference (points) |\n|---|---|---|---|\n", sp, tau)
			for k := 1; k <= perIterationMax; k++ {
				va, vf := accA[k], accF[k]
				if len(va) == 0 || len(va) != len(vf) {
					continue
				}
				d := make([]float64, len(va))
				for s := range va {
					d[s] = 100 * (va[s] - vf[s])
				}
				ia, iff, id := report.MeanInterval(scale(va, 100)), report.MeanInterval(scale(vf, 100)), report.MeanInterval(d)
				fmt.Fprintf(&b, "| %d | %.2f ± %.2f | %.2f ± %.2f | %+.2f ± %.2f |\n", k, iff.Mean, iff.Half, ia.Mean, ia.Half, id.Mean, id.Half)
			}
		}
	}
	return b.String()
}

// accAt maps an outer iteration to the test accuracies of the cell's runs
// evaluated after it (every run, or the iteration is left out).
func (e *FBOTable) accAt(c *fboCell) map[int][]float64 {
	rpi := e.roundsPerIter(c.Method)
	out := map[int][]float64{}
	for _, r := range c.runs {
		for k, round := range r.rounds {
			out[round/rpi] = append(out[round/rpi], r.acc[k])
		}
	}
	for k, v := range out {
		if len(v) != len(c.runs) {
			delete(out, k)
		}
	}
	return out
}

// scale returns s·v.
func scale(v []float64, s float64) []float64 {
	out := make([]float64, len(v))
	for k, x := range v {
		out[k] = s * x
	}
	return out
}
