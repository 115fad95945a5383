package scenarios

import (
	"context"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// SweepJob is one scenario of a sweep.
type SweepJob struct {
	Scenario Scenario
	OutDir   string
}

// SweepResult is the outcome of one job.
type SweepResult struct {
	Job     SweepJob
	Summary *Summary
	Wall    time.Duration
	Err     error
}

// Sweep runs jobs with at most `parallel` at once and returns the results in
// job order. A failing job does not stop the others.
func Sweep(ctx context.Context, jobs []SweepJob, parallel int, done func(SweepResult)) []SweepResult {
	if parallel < 1 {
		parallel = 1
	}
	res := make([]SweepResult, len(jobs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for k, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(k int, j SweepJob) {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			sum, err := Execute(ctx, j.Scenario, Options{OutDir: j.OutDir})
			r := SweepResult{Job: j, Summary: sum, Wall: time.Since(start), Err: err}
			res[k] = r
			if done != nil {
				mu.Lock()
				done(r)
				mu.Unlock()
			}
		}(k, j)
	}
	wg.Wait()
	return res
}

// networkOrder is the column order of the paper's tables.
var networkOrder = []string{"fully-connected", "static-undirected", "stochastic-undirected", "stochastic-directed"}

var networkShort = map[string]string{"fully-connected": "FC", "static-undirected": "FixU",
	"stochastic-undirected": "StoU", "stochastic-directed": "StoD"}

// table groups results by method (rows) and network (columns).
type table struct {
	methods, networks []string
	cell              map[[2]string]SweepResult
}

func newTable(results []SweepResult) *table {
	t := &table{cell: map[[2]string]SweepResult{}}
	seenM, seenN := map[string]bool{}, map[string]bool{}
	for _, r := range results {
		m, n := methodName(r.Job.Scenario), r.Job.Scenario.Network.Topology.Name
		t.cell[[2]string{m, n}] = r
		if !seenM[m] {
			seenM[m] = true
			t.methods = append(t.methods, m)
		}
		seenN[n] = true
	}
	rank := map[string]int{}
	for k, m := range Methods {
		rank[m] = k
	}
	sort.SliceStable(t.methods, func(a, b int) bool { return rankOf(rank, t.methods[a]) < rankOf(rank, t.methods[b]) })
	for _, n := range networkOrder {
		if seenN[n] {
			t.networks = append(t.networks, n)
			delete(seenN, n)
		}
	}
	var rest []string
	for n := range seenN {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	t.networks = append(t.networks, rest...)
	return t
}

func rankOf(rank map[string]int, m string) int {
	if r, ok := rank[m]; ok {
		return r
	}
	return len(rank)
}

func methodName(sc Scenario) string {
	if sc.Method == "" {
		return sc.Name
	}
	return sc.Method
}

func short(n string) string {
	if s, ok := networkShort[n]; ok {
		return s
	}
	return n
}

func (t *table) text(m, n string) string {
	r, ok := t.cell[[2]string{m, n}]
	switch {
	case !ok:
		return "n/a"
	case r.Err != nil:
		return "failed"
	}
	b := r.Summary.Best
	return fmt.Sprintf("%.1f / %.1f", 100*b.TestAcc, 100*b.TestAccP)
}

// WriteSweepTables writes results.md and results.csv: rows are methods,
// columns networks, cells "average / 10th percentile" test accuracy (%) at
// the outer step with the best validation accuracy.
func WriteSweepTables(dir string, results []SweepResult) error {
	t := newTable(results)
	var md strings.Builder
	md.WriteString("| method |")
	for _, n := range t.networks {
		md.WriteString(" " + short(n) + " |")
	}
	md.WriteString("\n|---|")
	for range t.networks {
		md.WriteString("---|")
	}
	md.WriteString("\n")
	for _, m := range t.methods {
		md.WriteString("| " + m + " |")
		for _, n := range t.networks {
			md.WriteString(" " + t.text(m, n) + " |")
		}
		md.WriteString("\n")
	}
	md.WriteString("\nCells: test accuracy (%) averaged over clients weighted by local test size / 10th percentile over clients, at the outer step with the best validation accuracy.\n\n| run | best step | wall time |\n|---|---|---|\n")
	for _, r := range results {
		var best string
		if r.Err != nil {
			best = "failed: " + oneLineErr(r.Err)
		} else {
			best = fmt.Sprint(r.Summary.Best.Step)
		}
		fmt.Fprintf(&md, "| %s | %s | %s |\n", r.Job.Scenario.Name, best, r.Wall.Round(time.Second))
	}
	if err := writeAtomic(filepath.Join(dir, "results.md"), []byte(md.String())); err != nil {
		return err
	}
	var buf strings.Builder
	w := csv.NewWriter(&buf)
	w.Write([]string{"method", "network", "test_acc", "test_acc_p10", "val_acc", "best_step", "status"})
	for _, m := range t.methods {
		for _, n := range t.networks {
			r, ok := t.cell[[2]string{m, n}]
			if !ok {
				continue
			}
			if r.Err != nil {
				w.Write([]string{m, n, "", "", "", "", "failed"})
				continue
			}
			b := r.Summary.Best
			w.Write([]string{m, n, ftoa(b.TestAcc), ftoa(b.TestAccP), ftoa(b.ValAcc), fmt.Sprint(b.Step), "ok"})
		}
	}
	w.Flush()
	return writeAtomic(filepath.Join(dir, "results.csv"), []byte(buf.String()))
}

func oneLineErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.ReplaceAll(s, "|", "/")
}

// WriteSweepPlot draws validation.png: validation accuracy against outer
// step, one curve per method, one panel per network. Methods without outer
// steps are drawn as flat lines.
func WriteSweepPlot(path string, results []SweepResult) error {
	t := newTable(results)
	maxStep := 1
	for _, r := range results {
		if r.Err == nil && len(r.Summary.Outer) > 0 {
			maxStep = max(maxStep, len(r.Summary.Outer)-1)
		}
	}
	panels := make([]*plot.Plot, len(t.networks))
	for ni, n := range t.networks {
		p := plot.New()
		p.Title.Text = n
		p.X.Label.Text = "outer step"
		p.Y.Label.Text = "validation accuracy"
		p.Legend.Top = false
		p.Legend.Left = false
		for mi, m := range t.methods {
			r, ok := t.cell[[2]string{m, n}]
			if !ok || r.Err != nil {
				continue
			}
			var pts plotter.XYs
			if len(r.Summary.Outer) == 0 {
				v := r.Summary.Final.ValAcc
				pts = plotter.XYs{{X: 0, Y: v}, {X: float64(maxStep), Y: v}}
			} else {
				for _, o := range r.Summary.Outer {
					pts = append(pts, plotter.XY{X: float64(o.Step), Y: o.ValAcc})
				}
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return fmt.Errorf("plotting: %w", err)
			}
			c := palette[mi%len(palette)]
			l.Color = c
			l.Width = vg.Points(1.5)
			if len(r.Summary.Outer) == 0 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(l)
			p.Legend.Add(m, l)
		}
		panels[ni] = p
	}
	if len(panels) == 0 {
		return nil
	}
	const w, h = 5 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(w*vg.Length(len(panels)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{panels}, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
	return writePNG(path, img)
}
