package experiments

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"hgpsim/report"
)

// plot draws accuracy.png: one panel per (split, τ) of the loss-free runs
// and one per upload-loss split, test accuracy against communication
// rounds, the mean over seeds per method (dashed: with upload loss).
func (e *FBOTable) plot(cells []*fboCell) ([]byte, error) {
	type panel struct {
		title string
		keep  func(c *fboCell) bool
	}
	var panels []panel
	for _, s := range e.Splits {
		for _, t := range e.Taus {
			panels = append(panels, panel{fmt.Sprintf("%s, τ = %d", s, t), func(c *fboCell) bool {
				return c.Loss == 0 && c.Split == s && c.Tau == t
			}})
		}
	}
	if len(e.UploadLoss) > 0 {
		for _, s := range e.LossSplits {
			panels = append(panels, panel{fmt.Sprintf("%s, τ = %d, upload loss", s, e.LossTau), func(c *fboCell) bool {
				return c.Split == s && c.Tau == e.LossTau
			}})
		}
	}
	plots := make([]*plot.Plot, len(panels))
	for k, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "communication rounds"
		p.Y.Label.Text = "test accuracy"
		p.Legend.Top = false
		p.Legend.Left = false
		for _, c := range cells {
			if !pn.keep(c) || len(c.runs) == 0 {
				continue
			}
			n := len(c.runs[0].acc)
			for _, r := range c.runs {
				n = min(n, len(r.acc))
			}
			line := make(plotter.XYs, n)
			for i := range n {
				var a float64
				for _, r := range c.runs {
					a += r.acc[i]
				}
				line[i] = plotter.XY{X: float64(c.runs[0].rounds[i]), Y: a / float64(len(c.runs))}
			}
			l, err := plotter.NewLine(line)
			if err != nil {
				return nil, fmt.Errorf("plotting: %w", err)
			}
			mi := 0
			for j, m := range e.Methods {
				if m == c.Method {
					mi = j
				}
			}
			l.Color = report.Palette[mi%len(report.Palette)]
			l.Width = vg.Points(1.5)
			name := c.Method
			if c.Loss > 0 {
				l.Dashes = []vg.Length{vg.Points(6 * c.Loss / 0.3), vg.Points(3)}
				name = fmt.Sprintf("%s, loss %g", c.Method, c.Loss)
			}
			p.Add(l)
			p.Legend.Add(name, l)
		}
		plots[k] = p
	}
	cols := min(len(plots), 3)
	rows := (len(plots) + cols - 1) / cols
	const w, h = 5 * vg.Inch, 3.8 * vg.Inch
	img := vgimg.New(w*vg.Length(cols), h*vg.Length(rows))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := make([][]*plot.Plot, rows)
	for r := range rows {
		grid[r] = make([]*plot.Plot, cols)
		for c := range cols {
			grid[r][c] = plot.New() // an empty tile
			if k := r*cols + c; k < len(plots) {
				grid[r][c] = plots[k]
			} else {
				grid[r][c].HideAxes()
			}
		}
	}
	canvases := plot.Align(grid, tiles, dc)
	for r := range rows {
		for c := range cols {
			grid[r][c].Draw(canvases[r][c])
		}
	}
	return report.PNG(img)
}
