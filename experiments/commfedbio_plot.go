package experiments

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"hgpsim/report"
)

// panels draws one plot per noise setting side by side.
func panels(ps []*plot.Plot) ([]byte, error) {
	const w, h = 6 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w*vg.Length(len(ps)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(ps), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align([][]*plot.Plot{ps}, tiles, dc)
	for i, p := range ps {
		p.Draw(canvases[0][i])
	}
	return report.PNG(img)
}

// plotCurves draws accuracy.png: test accuracy against rounds, one curve
// per method, one panel per noise setting (the paper's Fig. 1).
func (e *CommFedBiOExp) plotCurves(sum *CommFedBiOSummary) ([]byte, error) {
	var ps []*plot.Plot
	for _, noise := range e.Noises {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s noise, variants at ×%g", noise, e.CurveCompression)
		p.X.Label.Text = "round"
		p.Y.Label.Text = "test accuracy"
		for _, r := range sum.Curves {
			if r.Noise != noise || len(r.Curve) == 0 {
				continue
			}
			mi := slices.Index(e.Methods, r.Method) // one colour per method in every panel
			xy := make(plotter.XYs, len(r.Curve))
			for k, a := range r.Curve {
				xy[k] = plotter.XY{X: float64(r.CurveAt[k]), Y: a}
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, fmt.Errorf("plotting: %w", err)
			}
			l.Color = report.Palette[mi%len(report.Palette)]
			l.Width = vg.Points(1.5)
			p.Add(l)
			name := r.Method
			if r.Method == "preprocess" {
				name = fmt.Sprintf("preprocess (threshold %g)", r.Threshold)
			}
			p.Legend.Add(name, l)
		}
		ps = append(ps, p)
	}
	return panels(ps)
}

// plotF1 draws f1.png: F1 against the compression rate (log scale), one
// curve per variant, one panel per noise setting (the paper's Fig. 2).
func (e *CommFedBiOExp) plotF1(sum *CommFedBiOSummary) ([]byte, error) {
	var ps []*plot.Plot
	for _, noise := range e.Noises {
		p := plot.New()
		p.Title.Text = noise + " noise"
		p.X.Label.Text = "compression rate"
		p.Y.Label.Text = "F1 (λ < 0.5 ⇒ mislabelled)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = 0, 1
		p.X.Min, p.X.Max = 1, 1000 // a log axis needs a positive range, even when empty
		for vi, v := range e.Variants {
			var xy plotter.XYs
			for _, r := range sum.F1 {
				if r.Noise == noise && r.Method == v {
					xy = append(xy, plotter.XY{X: math.Max(r.Rate, 1), Y: r.F1})
				}
			}
			if len(xy) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, fmt.Errorf("plotting: %w", err)
			}
			c := report.Palette[vi%len(report.Palette)]
			l.Color, pts.Color = c, c
			l.Width = vg.Points(1.5)
			p.Add(l, pts)
			p.Legend.Add(v, l, pts)
		}
		ps = append(ps, p)
	}
	return panels(ps)
}
