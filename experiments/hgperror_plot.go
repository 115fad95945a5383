package experiments

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"hgpsim/report"
)

// plot draws error.png: one panel per network, one curve per (α, β): the
// median over the seeds that have an oracle with a 10–90% band, on a log
// scale.
func (r *hgpErrorRun) plot() ([]byte, error) {
	const floor = 1e-16 // log scale: exact zeros are drawn at the floor
	panels := make([]*plot.Plot, len(r.spec.Networks))
	for ni, kind := range r.spec.Networks {
		p := plot.New()
		p.Title.Text = kind
		if used := len(r.curves(ni, 0)); used < r.spec.Seeds {
			p.Title.Text = fmt.Sprintf("%s (%d of %d seeds have an oracle)", kind, used, r.spec.Seeds)
			if used == 0 { // an empty panel: a log axis needs a positive range
				p.X.Min, p.X.Max = 0, float64(r.spec.M)
				p.Y.Min, p.Y.Max = floor, 1
			}
		}
		p.X.Label.Text = "m (VR-HGP iterations)"
		p.Y.Label.Text = "‖v⁽ᵐ⁾ − oracle‖"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Top = true
		for pi, pair := range r.spec.Pairs {
			curves := r.curves(ni, pi)
			if len(curves) == 0 {
				continue
			}
			med, lo, hi := bands(curves)
			c := report.Palette[pi%len(report.Palette)]
			band := make(plotter.XYs, 0, 2*len(med))
			line := make(plotter.XYs, len(med))
			for m := range med {
				line[m] = plotter.XY{X: float64(m), Y: math.Max(med[m], floor)}
				band = append(band, plotter.XY{X: float64(m), Y: math.Max(hi[m], floor)})
			}
			for m := len(med) - 1; m >= 0; m-- {
				band = append(band, plotter.XY{X: float64(m), Y: math.Max(lo[m], floor)})
			}
			// The 10–90% band as two thin lines: filled translucent polygons
			// with a thousand vertices render poorly in vgimg.
			for _, edge := range []plotter.XYs{band[:len(med)], band[len(med):]} {
				b, err := plotter.NewLine(edge)
				if err != nil {
					return nil, fmt.Errorf("plotting: %w", err)
				}
				b.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 90}
				b.Width = vg.Points(0.5)
				p.Add(b)
			}
			l, err := plotter.NewLine(line)
			if err != nil {
				return nil, fmt.Errorf("plotting: %w", err)
			}
			l.Color = c
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("α=%g, β=%g", pair[0], pair[1]), l)
		}
		panels[ni] = p
	}
	const w, h = 6 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w*vg.Length(len(panels)), h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := [][]*plot.Plot{panels}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[0][i])
	}
	return report.PNG(img)
}
