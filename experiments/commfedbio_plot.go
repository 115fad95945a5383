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

// fedBioPanels returns the (noise, flip) pairs of the panels, in the
// order of the runs, and a panel's title prefix (the flip only when the
// runs have more than one).
func fedBioPanels(runs []*fedBioRun) ([][2]string, func([2]string) string) {
	var out [][2]string
	flips := map[string]bool{}
	for _, r := range runs {
		k := [2]string{r.Noise, r.Flip}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
		flips[r.Flip] = true
	}
	return out, func(k [2]string) string {
		if len(flips) > 1 {
			return k[0] + " " + k[1]
		}
		return k[0]
	}
}

// meanCurve averages the runs' curves over the seeds, round by round
// (rounds some seed did not evaluate are left out).
func meanCurve(runs []*fedBioRun) plotter.XYs {
	sum, n := map[int]float64{}, map[int]int{}
	var rounds []int
	for _, r := range runs {
		for k, a := range r.Curve {
			at := r.CurveAt[k]
			if n[at] == 0 {
				rounds = append(rounds, at)
			}
			sum[at] += a
			n[at]++
		}
	}
	slices.Sort(rounds)
	var xy plotter.XYs
	for _, at := range rounds {
		if n[at] == len(runs) {
			xy = append(xy, plotter.XY{X: float64(at), Y: sum[at] / float64(n[at])})
		}
	}
	return xy
}

// plotCurves draws accuracy.png: test accuracy against rounds (the mean
// over the seeds), one curve per method, one panel per noise setting and
// flip (the paper's Fig. 1).
func (e *CommFedBiOExp) plotCurves(sum *CommFedBiOSummary) ([]byte, error) {
	var ps []*plot.Plot
	keys, title := fedBioPanels(sum.Curves)
	for _, key := range keys {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s noise, variants at ×%g", title(key), e.CurveCompression)
		p.X.Label.Text = "round"
		p.Y.Label.Text = "test accuracy"
		for mi, m := range e.Methods {
			var runs []*fedBioRun
			for _, r := range sum.Curves {
				if r.Noise == key[0] && r.Flip == key[1] && r.Method == m && len(r.Curve) > 0 {
					runs = append(runs, r)
				}
			}
			xy := meanCurve(runs)
			if len(xy) == 0 {
				continue
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, fmt.Errorf("plotting: %w", err)
			}
			l.Color = report.Palette[mi%len(report.Palette)] // one colour per method in every panel
			l.Width = vg.Points(1.5)
			p.Add(l)
			name := m
			if m == "preprocess" && len(runs) == 1 {
				name = fmt.Sprintf("preprocess (threshold %g)", runs[0].Threshold)
			}
			p.Legend.Add(name, l)
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		ps = append(ps, plot.New())
	}
	return panels(ps)
}

// plotF1 draws f1.png: F1 (the mean over the seeds) against the
// compression rate (log scale), one curve per variant, one panel per
// noise setting and flip (the paper's Fig. 2).
func (e *CommFedBiOExp) plotF1(sum *CommFedBiOSummary) ([]byte, error) {
	var ps []*plot.Plot
	keys, title := fedBioPanels(sum.F1)
	for _, key := range keys {
		p := plot.New()
		p.Title.Text = title(key) + " noise"
		p.X.Label.Text = "compression rate"
		p.Y.Label.Text = "F1 (λ < 0.5 ⇒ mislabelled)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = 0, 1
		p.X.Min, p.X.Max = 1, 1000 // a log axis needs a positive range, even when empty
		for vi, v := range e.Variants {
			var xy plotter.XYs
			for _, rate := range e.Rates {
				var vs []float64
				for _, r := range sum.F1 {
					if r.Noise == key[0] && r.Flip == key[1] && r.Method == v && r.Rate == rate {
						vs = append(vs, r.F1)
					}
				}
				if len(vs) > 0 {
					xy = append(xy, plotter.XY{X: math.Max(rate, 1), Y: report.MeanInterval(vs).Mean})
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
	if len(ps) == 0 {
		ps = append(ps, plot.New())
	}
	return panels(ps)
}

// plotNoise draws noise.png (noise_stats): over the rounds, the mean over
// the seeds of the noisy samples' share of the λ-weighted gradient norm
// (solid) and of their mean λ (dashed), one colour per method, one panel
// per noise setting and flip.
func (e *CommFedBiOExp) plotNoise(sum *CommFedBiOSummary) ([]byte, error) {
	var runs []*fedBioRun
	for _, r := range append(append([]*fedBioRun(nil), sum.Curves...), sum.F1...) {
		if len(r.NoiseAt) > 0 && !slices.Contains(runs, r) {
			runs = append(runs, r)
		}
	}
	keys, title := fedBioPanels(runs)
	type series struct {
		method string
		rate   float64
	}
	var all []series
	for _, r := range runs {
		if s := (series{r.Method, r.Rate}); !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	var ps []*plot.Plot
	for _, key := range keys {
		p := plot.New()
		p.Title.Text = title(key) + " noise: solid noisy share of the gradient norm, dashed mean λ on noisy"
		p.X.Label.Text = "round"
		p.Y.Min, p.Y.Max = 0, 1
		for si, s := range all {
			for _, lam := range []bool{false, true} {
				sums, n := map[int]float64{}, map[int]int{}
				var rounds []int
				count := 0
				for _, r := range runs {
					if r.Noise != key[0] || r.Flip != key[1] || r.Method != s.method || r.Rate != s.rate {
						continue
					}
					count++
					for _, q := range r.NoiseAt {
						if n[q.Round] == 0 {
							rounds = append(rounds, q.Round)
						}
						v := q.GradShare
						if lam {
							v = q.LambdaNoisy
						}
						sums[q.Round] += v
						n[q.Round]++
					}
				}
				slices.Sort(rounds)
				var xy plotter.XYs
				for _, at := range rounds {
					if n[at] == count {
						xy = append(xy, plotter.XY{X: float64(at), Y: sums[at] / float64(count)})
					}
				}
				if len(xy) == 0 {
					continue
				}
				l, err := plotter.NewLine(xy)
				if err != nil {
					return nil, fmt.Errorf("plotting: %w", err)
				}
				l.Color = report.Palette[si%len(report.Palette)]
				l.Width = vg.Points(1.5)
				if lam {
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				} else {
					name := s.method
					if s.rate > 0 {
						name += fmt.Sprintf(" ×%g", s.rate)
					}
					p.Legend.Add(name, l)
				}
				p.Add(l)
			}
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		ps = append(ps, plot.New())
	}
	return panels(ps)
}
