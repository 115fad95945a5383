package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// series is one line of a study plot.
type series struct {
	label string
	pts   plotter.XYs
	errs  plotter.YErrors
}

// errorPoints lets plotter.YErrorBars read a series.
type errorPoints struct {
	plotter.XYs
	plotter.YErrors
}

func (e errorPoints) Len() int { return len(e.XYs) }

// xAxis places the groups along the first grid axis: at its numeric values
// when every value is a number, else at 0, 1, … in the grid's order with
// the values as tick labels. Without a grid the methods are the axis.
type xAxis struct {
	label   string
	numeric bool
	pos     map[string]float64
	ticks   []plot.Tick
}

func newXAxis(groups []*group, keys []string) xAxis {
	ax := xAxis{label: "method", pos: map[string]float64{}, numeric: len(keys) > 0}
	if len(keys) > 0 {
		ax.label = keys[0]
	}
	var values []string
	for _, g := range groups {
		v := ax.value(g)
		if _, ok := ax.pos[v]; ok {
			continue
		}
		ax.pos[v] = 0
		values = append(values, v)
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			ax.numeric = false
		}
	}
	for k, v := range values {
		if ax.numeric {
			ax.pos[v], _ = strconv.ParseFloat(v, 64)
			continue
		}
		ax.pos[v] = float64(k)
		ax.ticks = append(ax.ticks, plot.Tick{Value: float64(k), Label: v})
	}
	return ax
}

// value is the group's coordinate on the axis, as text.
func (ax xAxis) value(g *group) string {
	if len(g.vary) > 0 {
		return g.vary[0].Value
	}
	return g.method
}

// seriesLabel names the line a group belongs to: what varies besides the
// x axis. On a metric plot the first grid axis is the x axis (varyFrom 1),
// or the method when there is no grid; a curve's x axis is the round.
func seriesLabel(g *group, multiBase bool, varyFrom int) string {
	var parts []string
	if multiBase {
		parts = append(parts, g.base)
	}
	methodIsAxis := varyFrom > 0 && len(g.vary) == 0
	if !methodIsAxis {
		parts = append(parts, g.method)
	}
	for _, a := range g.vary[min(varyFrom, len(g.vary)):] {
		parts = append(parts, run.ShortKey(a.Key)+"="+a.Value)
	}
	if len(parts) == 0 {
		return g.base
	}
	return strings.Join(parts, " ")
}

func multipleBases(groups []*group) bool {
	for _, g := range groups {
		if g.base != groups[0].base {
			return true
		}
	}
	return false
}

// writeMetricPlot draws metric m of every group against the first grid
// axis, with 95 % intervals as error bars.
func writeMetricPlot(path string, groups []*group, keys []string, m Metric) error {
	if len(groups) == 0 {
		return nil
	}
	ax := newXAxis(groups, keys)
	multi := multipleBases(groups)
	var lines []*series
	byLabel := map[string]*series{}
	skipped := 0
	for _, g := range groups {
		st := g.stat(m)
		if st.N == 0 {
			continue
		}
		if math.IsNaN(st.Mean) || math.IsInf(st.Mean, 0) {
			skipped++
			continue
		}
		label := seriesLabel(g, multi, 1)
		s, ok := byLabel[label]
		if !ok {
			s = &series{label: label}
			byLabel[label] = s
			lines = append(lines, s)
		}
		half := st.Half
		if math.IsNaN(half) || math.IsInf(half, 0) {
			half = 0 // one run, or a spread that overflowed (study.csv has it)
		}
		s.pts = append(s.pts, plotter.XY{X: ax.pos[ax.value(g)], Y: st.Mean})
		s.errs = append(s.errs, struct{ Low, High float64 }{half, half})
	}
	p := plot.New()
	p.Title.Text = m.Name
	if isAccuracy(m) {
		p.Title.Text += " (fraction)"
	}
	p.Title.Text += " — mean and 95 % interval over seeds"
	if skipped > 0 {
		p.Title.Text += fmt.Sprintf("; %d not finite, not drawn", skipped)
	}
	p.X.Label.Text = ax.label
	p.Y.Label.Text = m.Name
	if !ax.numeric {
		p.X.Tick.Marker = plot.ConstantTicks(ax.ticks)
		p.X.Min, p.X.Max = -0.5, float64(len(ax.ticks))-0.5
	}
	if ax.numeric {
		padX(p, lines)
	}
	legend := plot.NewLegend()
	logY := useLogScale(lines, m.Log)
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	for k, s := range lines {
		order := make([]int, len(s.pts))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return s.pts[order[a]].X < s.pts[order[b]].X })
		var pts plotter.XYs
		var errs plotter.YErrors
		for _, i := range order {
			e := s.errs[i]
			if logY && s.pts[i].Y-e.Low <= s.pts[i].Y/10 {
				// A log axis cannot show a bound at or below zero; the
				// bar stops at a tenth of the mean (study.csv has it).
				e.Low = s.pts[i].Y * 0.9
			}
			pts = append(pts, s.pts[i])
			errs = append(errs, e)
		}
		if err := addLine(p, &legend, k, s.label, pts, true); err != nil {
			return err
		}
		bars, err := plotter.NewYErrorBars(errorPoints{pts, errs})
		if err != nil {
			return fmt.Errorf("plotting %s: %w", m.Name, err)
		}
		bars.LineStyle.Color = Palette[k%len(Palette)]
		p.Add(bars)
	}
	return savePlot(path, p, legend)
}

// useLogScale says whether to draw the lines on a log axis: all values
// positive, and a metric that wants one or values spanning more than two
// orders of magnitude.
func useLogScale(lines []*series, wanted bool) bool {
	lo, hi := math.Inf(1), 0.0
	for _, s := range lines {
		for _, pt := range s.pts {
			if pt.Y <= 0 {
				return false
			}
			lo, hi = min(lo, pt.Y), max(hi, pt.Y)
		}
	}
	return hi > 0 && (wanted || hi/lo > 100)
}

// addLine draws one series, colour and dashes by its index, and names it
// in the legend.
func addLine(p *plot.Plot, legend *plot.Legend, k int, label string, pts plotter.XYs, points bool) error {
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plotting %s: %w", label, err)
	}
	l.Color = Palette[k%len(Palette)]
	l.Width = vg.Points(1.5)
	if k >= len(Palette) {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(l)
	legend.Add(label, l)
	if points {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("plotting %s: %w", label, err)
		}
		sc.Color = l.Color
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(2.5)
		p.Add(sc)
	}
	return nil
}

// widenLogRange gives a log axis whose data span a single value a decade
// around it: gonum widens an empty range by ±1, below zero for values
// under 1, where a log axis panics.
func widenLogRange(a *plot.Axis) {
	if _, ok := a.Scale.(plot.LogScale); ok && a.Min == a.Max && a.Min > 0 {
		a.Min, a.Max = a.Min/10, a.Max*10
	}
}

// savePlot renders the plot with its legend to the right, outside the
// data (study plots have many lines).
func savePlot(path string, p *plot.Plot, legend plot.Legend) error {
	widenLogRange(&p.Y)
	const plotW, h, gap = 6.5 * vg.Inch, 4.5 * vg.Inch, 10 * vg.Length(1)
	legend.Top, legend.Left = true, true
	probe := draw.New(vgimg.New(plotW, h))
	box := legend.Rectangle(probe)
	legendW := box.Max.X - box.Min.X + 2*gap
	img := vgimg.New(plotW+legendW, h)
	dc := draw.New(img)
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	legend.Draw(draw.Crop(dc, plotW+gap, -gap, 0, -2*gap))
	return WritePNG(path, img)
}

// padX widens a numeric x range by 5 % on each side, so that the points
// and error bars at its ends are not cut.
func padX(p *plot.Plot, lines []*series) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range lines {
		for _, pt := range s.pts {
			lo, hi = min(lo, pt.X), max(hi, pt.X)
		}
	}
	if lo > hi {
		return
	}
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = 0.5
	}
	p.X.Min, p.X.Max = lo-pad, hi+pad
}

// roundAxis numbers a run's evaluations along the whole run: the rounds of
// each phase (outer step) follow those of the one before.
func roundAxis(evals []scenarios.Eval) []float64 {
	out := make([]float64, len(evals))
	offset, last := 0, -1
	for k, e := range evals {
		if k > 0 && (e.Phase != evals[k-1].Phase || e.Step != evals[k-1].Step) {
			offset += last + 1
		}
		last = e.Round
		out[k] = float64(offset + e.Round)
	}
	return out
}

// writeCurvePlot draws metric m against the round, one line per group:
// at each evaluation the mean over the group's runs that reached it. A
// run that failed (diverged) contributes the evaluations it made, and the
// label says how many failed; points that are not finite are left out.
func writeCurvePlot(path string, groups []*group, keys []string, m Metric) error {
	p := plot.New()
	p.Title.Text = m.Name + " against the round — mean over seeds"
	p.X.Label.Text = "round (all phases)"
	p.Y.Label.Text = m.Name
	multi := multipleBases(groups)
	var lines []*series
	for _, g := range groups {
		var runs [][]scenarios.Eval
		var longest []scenarios.Eval
		for _, r := range g.runs {
			if r.Summary != nil && len(r.Summary.Evals) > 0 {
				runs = append(runs, r.Summary.Evals)
				if len(r.Summary.Evals) > len(longest) {
					longest = r.Summary.Evals
				}
			}
		}
		if len(runs) == 0 {
			continue
		}
		label := seriesLabel(g, multi, 0)
		if f := g.failed(); f > 0 {
			label += fmt.Sprintf(" (%d of %d failed)", f, len(g.runs))
		}
		xs := roundAxis(longest)
		s := &series{label: label}
		for i := range xs {
			sum, n := 0.0, 0
			for _, evals := range runs {
				if i < len(evals) {
					if v, ok := m.PerRound(evals[i].Agg); ok {
						sum += v
						n++
					}
				}
			}
			y := sum / float64(n)
			if n == 0 || math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			s.pts = append(s.pts, plotter.XY{X: xs[i], Y: y})
		}
		lines = append(lines, s)
	}
	if useLogScale(lines, m.Log) {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	legend := plot.NewLegend()
	for k, s := range lines {
		if err := addLine(p, &legend, k, s.label, s.pts, false); err != nil {
			return err
		}
	}
	return savePlot(path, p, legend)
}

// logTicks labels a log axis densely when it is short (plot.LogTicks
// labels only the powers of ten, which leaves a short axis with one label)
// and at most about eight powers of ten when it is long: within one decade
// at 1 … 9 × 10^k, within four at 1, 2 and 5 × 10^k.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	first, last := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	decades := math.Log10(hi / lo)
	var mantissas []float64
	labelled := map[float64]bool{}
	switch {
	case decades <= 1:
		mantissas = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
		for _, m := range mantissas {
			labelled[m] = true
		}
	case decades <= 4:
		mantissas = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
		labelled[1], labelled[2], labelled[5] = true, true, true
	default:
		mantissas = []float64{1}
		labelled[1] = true
	}
	every := math.Max(1, math.Ceil(decades/8))
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		for _, m := range mantissas {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-12) || v > hi*(1+1e-12) { // 6·10⁻¹ is 0.6000000000000001
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] && math.Mod(e-first, every) == 0 {
				t.Label = strconv.FormatFloat(v, 'g', 3, 64)
			}
			if t.Label != "" || decades <= 4 {
				ticks = append(ticks, t)
			}
		}
	}
	return ticks
}
