package report

import (
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"hgpsim/internal/fsutil"
	"hgpsim/run"
)

// StudyOptions chooses what a study report shows beyond its CSV files.
type StudyOptions struct {
	// Metrics are the columns of study.md and each gets <name>.png
	// against the first grid axis.
	Metrics []Metric
	// Curves each get curve-<name>.png: the metric against the round,
	// one line per group (mean over its seeds).
	Curves []Metric
}

// DefaultStudyMetrics are study.md's columns when none are chosen.
const DefaultStudyMetrics = "test_acc,test_acc_p10,consensus"

// group is the runs of one scenario, method and grid point: the replicate
// seeds whose spread the intervals show.
type group struct {
	base, method string
	vary         []run.Assignment
	runs         []run.SweepResult
}

// gridKeys are the varied keys of a sweep, in the grid's order.
func gridKeys(results []run.SweepResult) []string {
	if len(results) == 0 {
		return nil
	}
	var keys []string
	for _, a := range results[0].Job.Vary {
		keys = append(keys, a.Key)
	}
	return keys
}

// groupRuns collects results by scenario, method and grid point, in the
// order they first appear (the sweep's order).
func groupRuns(results []run.SweepResult) []*group {
	var out []*group
	index := map[string]*group{}
	for _, r := range results {
		key := []string{r.Job.Base, r.Job.Method}
		for _, a := range r.Job.Vary {
			key = append(key, a.Value)
		}
		k := strings.Join(key, "\x00")
		g, ok := index[k]
		if !ok {
			g = &group{base: r.Job.Base, method: r.Job.Method, vary: r.Job.Vary}
			index[k] = g
			out = append(out, g)
		}
		g.runs = append(g.runs, r)
	}
	return out
}

// Interval is a metric over a group's runs: the mean and the half-width
// of its 95 % Student-t interval (NaN with fewer than two runs).
type Interval struct {
	N          int
	Mean, Half float64
}

// MeanInterval computes the mean and 95 % t-interval of vs. A non-finite
// value makes the mean non-finite: a diverged seed is not averaged away.
func MeanInterval(vs []float64) Interval {
	n := len(vs)
	if n == 0 {
		return Interval{Mean: math.NaN(), Half: math.NaN()}
	}
	mean := 0.0
	for _, v := range vs {
		mean += v
	}
	mean /= float64(n)
	if n < 2 || math.IsNaN(mean) || math.IsInf(mean, 0) {
		return Interval{N: n, Mean: mean, Half: math.NaN()}
	}
	ss := 0.0
	for _, v := range vs {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return Interval{N: n, Mean: mean, Half: t * sd / math.Sqrt(float64(n))}
}

// stat is metric m over the group's completed runs that have it.
func (g *group) stat(m Metric) Interval {
	var vs []float64
	for _, r := range g.runs {
		if r.Err != nil {
			continue
		}
		if v, ok := m.Value(r.Summary); ok {
			vs = append(vs, v)
		}
	}
	return MeanInterval(vs)
}

func (g *group) failed() int {
	n := 0
	for _, r := range g.runs {
		if r.Err != nil {
			n++
		}
	}
	return n
}

// diverged counts the completed runs that blew up somewhere
// (run.Summary.Blowups), whatever their headline.
func (g *group) diverged() int {
	n := 0
	for _, r := range g.runs {
		if r.Err == nil && r.Summary != nil && len(r.Summary.Blowups) > 0 {
			n++
		}
	}
	return n
}

// fixedColumns lead every row of results.csv.
var fixedColumns = []string{"file", "scenario", "run", "method", "network", "seed"}

// WriteStudy writes the study outputs of a sweep into dir:
//
//   - results.csv: one row per run; the fixed columns, every varied key,
//     status, every metric, error;
//   - study.csv: one row per scenario × method × grid point; runs,
//     failed, and every metric's mean and 95 % half-width over the seeds;
//   - study.md: the same for opt.Metrics, as "mean ± half-width";
//   - <metric>.png for each of opt.Metrics against the first grid axis
//     (against the method without a grid), and curve-<metric>.png for
//     each of opt.Curves.
func WriteStudy(dir string, results []run.SweepResult, opt StudyOptions) error {
	keys := gridKeys(results)
	if err := writeLongCSV(filepath.Join(dir, "results.csv"), results, keys); err != nil {
		return err
	}
	groups := groupRuns(results)
	if err := writeStudyCSV(filepath.Join(dir, "study.csv"), groups, keys); err != nil {
		return err
	}
	if err := fsutil.WriteAtomic(filepath.Join(dir, "study.md"), []byte(studyMarkdown(groups, keys, opt.Metrics))); err != nil {
		return err
	}
	for _, m := range opt.Metrics {
		if err := writeMetricPlot(filepath.Join(dir, m.Name+".png"), groups, keys, m); err != nil {
			return err
		}
	}
	for _, m := range opt.Curves {
		if err := writeCurvePlot(filepath.Join(dir, "curve-"+m.Name+".png"), groups, keys, m); err != nil {
			return err
		}
	}
	return nil
}

// varyColumns are the grid keys that are not already a fixed column.
func varyColumns(keys []string) []int {
	var idx []int
	for k, key := range keys {
		if key != "seed" && key != "method" {
			idx = append(idx, k)
		}
	}
	return idx
}

func writeLongCSV(path string, results []run.SweepResult, keys []string) error {
	vary := varyColumns(keys)
	var buf strings.Builder
	w := csv.NewWriter(&buf)
	header := append([]string(nil), fixedColumns...)
	for _, k := range vary {
		header = append(header, keys[k])
	}
	header = append(header, "status")
	for _, m := range Metrics {
		header = append(header, m.Name)
	}
	w.Write(append(header, "error"))
	for _, r := range results {
		sc := r.Job.Scenario
		row := []string{r.Job.File, r.Job.Base, sc.Name, r.Job.Method, sc.Network.Topology.Name, strconv.FormatUint(sc.Seed, 10)}
		for _, k := range vary {
			row = append(row, r.Job.Vary[k].Value)
		}
		if r.Err != nil {
			row = append(row, "failed")
			row = append(row, make([]string, len(Metrics))...)
			w.Write(append(row, oneLineErr(r.Err)))
			continue
		}
		row = append(row, "ok")
		for _, m := range Metrics {
			cell := ""
			if v, ok := m.Value(r.Summary); ok {
				cell = ftoa(v)
			}
			row = append(row, cell)
		}
		w.Write(append(row, ""))
	}
	w.Flush()
	return fsutil.WriteAtomic(path, []byte(buf.String()))
}

func writeStudyCSV(path string, groups []*group, keys []string) error {
	var buf strings.Builder
	w := csv.NewWriter(&buf)
	header := append([]string{"scenario", "method"}, keys...)
	header = append(header, "runs", "failed")
	for _, m := range Metrics {
		header = append(header, m.Name+"_mean", m.Name+"_ci95")
	}
	w.Write(header)
	for _, g := range groups {
		row := []string{g.base, g.method}
		for _, a := range g.vary {
			row = append(row, a.Value)
		}
		row = append(row, strconv.Itoa(len(g.runs)), strconv.Itoa(g.failed()))
		for _, m := range Metrics {
			s := g.stat(m)
			if s.N == 0 {
				row = append(row, "", "")
				continue
			}
			half := ""
			if !math.IsNaN(s.Half) {
				half = ftoa(s.Half)
			}
			row = append(row, ftoa(s.Mean), half)
		}
		w.Write(row)
	}
	w.Flush()
	return fsutil.WriteAtomic(path, []byte(buf.String()))
}

// isAccuracy says whether a metric is shown in percent.
func isAccuracy(m Metric) bool { return strings.Contains(m.Name, "acc") }

// formatInterval renders "mean ± half" (accuracies in %).
func formatInterval(m Metric, s Interval) string {
	if s.N == 0 {
		return "–"
	}
	scale, format := 1.0, "%.4g"
	if isAccuracy(m) {
		scale, format = 100, "%.1f"
	}
	out := fmt.Sprintf(format, scale*s.Mean)
	if !math.IsNaN(s.Half) {
		out += " ± " + fmt.Sprintf(format, scale*s.Half)
	}
	return out
}

func studyMarkdown(groups []*group, keys []string, metrics []Metric) string {
	var b strings.Builder
	bases := map[string]bool{}
	for _, g := range groups {
		bases[g.base] = true
	}
	cols := []string{"method"}
	if len(bases) > 1 {
		cols = append([]string{"scenario"}, cols...)
	}
	cols = append(cols, keys...)
	cols = append(cols, "runs")
	for _, m := range metrics {
		name := m.Name
		if isAccuracy(m) {
			name += " (%)"
		}
		cols = append(cols, name)
	}
	b.WriteString("| " + strings.Join(cols, " | ") + " |\n|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, g := range groups {
		var row []string
		if len(bases) > 1 {
			row = append(row, g.base)
		}
		row = append(row, g.method)
		for _, a := range g.vary {
			row = append(row, a.Value)
		}
		runs := strconv.Itoa(len(g.runs))
		if f := g.failed(); f > 0 {
			runs += fmt.Sprintf(" (%d failed)", f)
		}
		if d := g.diverged(); d > 0 {
			runs += fmt.Sprintf(" (%d diverged)", d)
		}
		row = append(row, runs)
		for _, m := range metrics {
			row = append(row, formatInterval(m, g.stat(m)))
		}
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	b.WriteString("\nCells: mean over the completed runs (replicate seeds) ± the half-width of the 95 % Student-t interval (none with one run). A run whose value is not finite makes the mean not finite. A diverged run completed, but a value of it blew up in some phase (its summary.json lists them: blowups); its headline accuracy may come from an outer step before. Every metric of every run is in results.csv; every group's mean and interval in study.csv.\n")
	return b.String()
}
