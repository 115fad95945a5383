package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"hgpsim/internal/fsutil"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// table groups results by method (rows) and scenario (columns, in the
// order the files were given).
type table struct {
	methods, columns []string
	cell             map[[2]string]run.SweepResult
}

func newTable(results []run.SweepResult) *table {
	t := &table{cell: map[[2]string]run.SweepResult{}}
	seenM, seenC := map[string]bool{}, map[string]bool{}
	for _, r := range results {
		m, c := r.Job.Method, r.Job.Base
		t.cell[[2]string{m, c}] = r
		if !seenM[m] {
			seenM[m] = true
			t.methods = append(t.methods, m)
		}
		if !seenC[c] {
			seenC[c] = true
			t.columns = append(t.columns, c)
		}
	}
	rank := map[string]int{}
	for k, m := range scenarios.MethodOrder {
		rank[m] = k
	}
	sort.SliceStable(t.methods, func(a, b int) bool { return rankOf(rank, t.methods[a]) < rankOf(rank, t.methods[b]) })
	return t
}

func rankOf(rank map[string]int, m string) int {
	if r, ok := rank[m]; ok {
		return r
	}
	return len(rank)
}

func (t *table) text(m, n string) string {
	r, ok := t.cell[[2]string{m, n}]
	switch {
	case !ok:
		return "n/a"
	case r.Err != nil:
		return "failed"
	}
	b := r.Summary.Headline()
	return fmt.Sprintf("%.1f / %.1f", 100*b.TestAcc, 100*b.TestAccP)
}

// PaperTable says whether results form the paper's table: one run per
// method and scenario (no grid, no replicate seeds).
func PaperTable(results []run.SweepResult) bool {
	seen := map[[2]string]bool{}
	for _, r := range results {
		k := [2]string{r.Job.Method, r.Job.Base}
		if seen[k] || len(r.Job.Vary) > 0 {
			return false
		}
		seen[k] = true
	}
	return true
}

// WriteSweepTables writes results.md: rows are methods, columns scenarios
// (by name), cells "average / 10th percentile" test accuracy (%) at the
// outer step with the best validation accuracy, then one line per run.
// It is for sweeps that make a PaperTable; WriteStudy writes the rest.
func WriteSweepTables(dir string, results []run.SweepResult) error {
	t := newTable(results)
	var md strings.Builder
	md.WriteString("| method |")
	for _, c := range t.columns {
		md.WriteString(" " + c + " |")
	}
	md.WriteString("\n|---|")
	for range t.columns {
		md.WriteString("---|")
	}
	md.WriteString("\n")
	for _, m := range t.methods {
		md.WriteString("| " + m + " |")
		for _, c := range t.columns {
			md.WriteString(" " + t.text(m, c) + " |")
		}
		md.WriteString("\n")
	}
	md.WriteString("\nCells: test accuracy (%) averaged over clients weighted by local test size / 10th percentile over clients, at the outer step with the best validation accuracy.\n\n| run | file | network | seed | best step |\n|---|---|---|---|---|\n")
	for _, r := range results {
		var best string
		if r.Err != nil {
			best = "failed: " + oneLineErr(r.Err)
		} else {
			best = fmt.Sprint(r.Summary.Headline().Step)
		}
		sc := r.Job.Scenario
		fmt.Fprintf(&md, "| %s | %s | %s | %d | %s |\n", sc.Name, r.Job.File, sc.Network.Topology.Name, sc.Seed, best)
	}
	return fsutil.WriteAtomic(filepath.Join(dir, "results.md"), []byte(md.String()))
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
func WriteSweepPlot(path string, results []run.SweepResult) error {
	t := newTable(results)
	maxStep := 1
	for _, r := range results {
		if r.Err == nil && len(r.Summary.Outer) > 0 {
			maxStep = max(maxStep, len(r.Summary.Outer)-1)
		}
	}
	panels := make([]*plot.Plot, len(t.columns))
	for ni, n := range t.columns {
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
			c := Palette[mi%len(Palette)]
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
	return WritePNG(path, img)
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
