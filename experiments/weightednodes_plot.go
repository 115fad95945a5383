package experiments

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"hgpsim/report"
)

// wnPanels lays out one panel per (target, setting): targets in rows.
func wnPanels(e *WeightedNodesExp, fill func(p *plot.Plot, setting int, target string) error) ([]byte, error) {
	grid := make([][]*plot.Plot, len(e.Targets))
	for ti, t := range e.Targets {
		grid[ti] = make([]*plot.Plot, len(e.Settings))
		for si, s := range e.Settings {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("Setting %d, %s model", s, t)
			if err := fill(p, s, t); err != nil {
				return nil, fmt.Errorf("plotting: %w", err)
			}
			grid[ti][si] = p
		}
	}
	const w, h = 4.5 * vg.Inch, 3.5 * vg.Inch
	img := vgimg.New(w*vg.Length(len(e.Settings)), h*vg.Length(len(e.Targets)))
	tiles := draw.Tiles{Rows: len(e.Targets), Cols: len(e.Settings), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, draw.New(img))
	for i := range grid {
		for j, p := range grid[i] {
			p.Draw(canvases[i][j])
		}
	}
	return report.PNG(img)
}

// seedMean averages f over the runs of one cell, position by position.
func seedMean(runs []*wnRun, setting int, target, method string, f func(r *wnRun) []float64) []float64 {
	var out []float64
	n := 0
	for _, r := range runs {
		if r.Setting != setting || r.Target != target || r.Method != method {
			continue
		}
		v := f(r)
		if out == nil {
			out = make([]float64, len(v))
		}
		for i := range min(len(out), len(v)) {
			out[i] += v[i]
		}
		n++
	}
	for i := range out {
		out[i] /= float64(n)
	}
	return out
}

// wnAccuracyPlot is accuracy.png: the seed-mean test accuracy against the
// averagings (synchronizations) per method; Local-train, which sends
// nothing, is a horizontal line at its final accuracy.
func wnAccuracyPlot(e *WeightedNodesExp, paper *wnPaper, runs []*wnRun) ([]byte, error) {
	return wnPanels(e, func(p *plot.Plot, s int, t string) error {
		p.X.Label.Text = "synchronizations"
		p.Y.Label.Text = "test accuracy"
		p.Legend.Top = false
		var maxSync float64
		for _, r := range runs {
			if len(r.Syncs) > 0 {
				maxSync = max(maxSync, r.Syncs[len(r.Syncs)-1])
			}
		}
		for mi, m := range e.Methods {
			acc := seedMean(runs, s, t, m, func(r *wnRun) []float64 { return r.Test })
			syncs := seedMean(runs, s, t, m, func(r *wnRun) []float64 { return r.Syncs })
			if len(acc) == 0 {
				continue
			}
			pts := make(plotter.XYs, len(acc))
			for i := range acc {
				pts[i] = plotter.XY{X: syncs[i], Y: acc[i]}
			}
			if m == "local-train" {
				pts = plotter.XYs{{X: 0, Y: acc[len(acc)-1]}, {X: maxSync, Y: acc[len(acc)-1]}}
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Color = report.Palette[mi%len(report.Palette)]
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(paper.Labels[m], l)
		}
		return nil
	})
}

// wnWeightsPlot is weights.png: each node's seed-mean weight against the
// outer iterations (minority nodes red, majority blue), as the paper's
// Fig. 2 and 4–6.
func wnWeightsPlot(e *WeightedNodesExp, runs []*wnRun, minority int) ([]byte, error) {
	red, blue := color.NRGBA{R: 200, G: 40, B: 40, A: 255}, color.NRGBA{R: 40, G: 80, B: 200, A: 255}
	return wnPanels(e, func(p *plot.Plot, s int, t string) error {
		p.X.Label.Text = "outer iteration"
		p.Y.Label.Text = "w_k"
		p.Legend.Top = true
		var ws [][]float64
		n := 0
		for _, r := range runs {
			if r.Setting != s || r.Target != t || len(r.W) == 0 {
				continue
			}
			if ws == nil {
				ws = make([][]float64, len(r.W))
				for i := range ws {
					ws[i] = make([]float64, len(r.W[i]))
				}
			}
			for i := range min(len(ws), len(r.W)) {
				for k := range ws[i] {
					ws[i][k] += r.W[i][k]
				}
			}
			n++
		}
		if n == 0 {
			return nil
		}
		for k := range ws[0] {
			pts := make(plotter.XYs, len(ws))
			for i := range ws {
				pts[i] = plotter.XY{X: float64(i), Y: ws[i][k] / float64(n)}
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Width = vg.Points(1)
			l.Color = blue
			if k < minority {
				l.Color = red
			}
			p.Add(l)
			switch k {
			case 0:
				p.Legend.Add(fmt.Sprintf("minority nodes 1–%d", minority), l)
			case minority:
				p.Legend.Add(fmt.Sprintf("majority nodes %d–%d", minority+1, len(ws[0])), l)
			}
		}
		return nil
	})
}
