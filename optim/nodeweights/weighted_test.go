package nodeweights

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fed"
	"hgpsim/optim/optimtest"
)

// weightedSetup is a star of k nodes around a center, softmax regression
// with L2 l2 on synthetic data.
func weightedSetup(t *testing.T, k int, l2 float64, model models.Bilevel[float64], data []datasets.ClientData) *optim.Setup {
	t.Helper()
	nw, err := graph.Build(registry.Choice[graph.Topology]{Name: "star", Params: &graph.Star{Prob: 1}}, k+1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if data == nil {
		data, err = datasets.Synthetic(datasets.SyntheticSpec{Clients: k + 1, Classes: 3, Features: 4,
			Train: 40, Val: 30, Test: 30, Alpha: 0.5, Separation: 1, Shift: 1, Noise: 1}, 5)
		if err != nil {
			t.Fatal(err)
		}
	}
	if model == nil {
		model = models.Plain(models.NewSoftmax[float64](4, 3, l2))
	}
	x0 := make([]float64, model.DimX())
	model.Init(x0, rng.New(5, rng.Global, rng.PurposeInit))
	return &optim.Setup{Net: nw, Data: data, Model: model, X0: x0, Seed: 5}
}

// runWeighted runs alg on s and returns the center's behaviour and the
// phase reports.
func runWeighted(t *testing.T, alg optim.Algorithm, s *optim.Setup) (optim.Behaviour, []optim.PhaseReport) {
	t.Helper()
	if err := alg.Validate(s.Net.N); err != nil {
		t.Fatal(err)
	}
	var reps []optim.PhaseReport
	sink := &reportSink{f: func(r *optim.PhaseReport) { reps = append(reps, *r) }}
	clients, _ := optimtest.Execute(t, alg, s, nil, sink, nil)
	switch c := clients[0].(type) {
	case *stepClient:
		return c.b, reps
	case *optim.Fixed:
		return c.Behaviour, reps
	}
	return nil, reps
}

type reportSink struct {
	optim.NoSink
	f func(*optim.PhaseReport)
}

func (s *reportSink) Finished(r *optim.PhaseReport) error { s.f(r); return nil }

// solveWeighted returns argmin Σ w_k L̂_k by full-batch gradient descent
// (strongly convex: to machine precision).
func solveWeighted(model models.Bilevel[float64], data []datasets.ClientData, w, x0 []float64, lr float64, iters int) []float64 {
	x, g, sum := slices.Clone(x0), make([]float64, len(x0)), make([]float64, len(x0))
	for range iters {
		clear(sum)
		for k, wk := range w {
			model.InnerGrad(g, x, nil, data[k+1].Train, nil)
			floats.AddScaled(sum, wk, g)
		}
		floats.AddScaled(x, -lr, sum)
	}
	return x
}

// exactWeighted is weighted-nodes with full batches (every SVRG step is a
// gradient step) and τ = 1: both solves are gradient descent to high
// precision, so the center's hyper-gradient is eq. (13) up to rounding.
func exactWeighted(outer int) *WeightedNodes {
	return &WeightedNodes{WeightedCommon: fed.WeightedCommon{Outer: outer, Epochs: 600, Tau: 1, LR: 1, Batch: 1000},
		SVRGParam: SVRGParam{Q: 0}, HLR: 1, Eta: 0.5, Cap: 0.5, Method: "projected"}
}

// The hyper-gradient (eq. 13, with θ̄ and h̄ from Local-SVRG) matches central
// finite differences of F(w) = L̂₀(θ̂(w)), and the h-solve reaches
// (Σ w_k ∇²L̂_k)⁻¹ ∇L̂₀.
func TestWeightedHypergradient(t *testing.T) {
	const k = 3
	s := weightedSetup(t, k, 0.1, nil, nil)
	alg := exactWeighted(1)
	center, _ := runWeighted(t, alg, s)
	c := center.(*wnCenter)
	w := fed.Uniform(k)
	model := s.Model.Clone()
	theta := solveWeighted(model, s.Data, w, s.X0, 1, 3000)
	if d := floats.Distance(theta, c.theta, 2) / floats.Norm(theta, 2); d > 1e-9 {
		t.Fatalf("θ̄ is %.3g (relative) from θ̂(w)", d)
	}
	// h̄ solves (Σ w_k ∇²L̂_k) h = ∇L̂₀(θ).
	g0, hv, res := make([]float64, len(theta)), make([]float64, len(theta)), make([]float64, len(theta))
	model.InnerGrad(g0, c.theta, nil, s.Data[0].Val, nil)
	for j, wk := range w {
		model.InnerHVP(hv, c.theta, nil, s.Data[j+1].Train, nil, c.hbar)
		floats.AddScaled(res, wk, hv)
	}
	floats.Sub(res, g0)
	if r := floats.Norm(res, 2) / floats.Norm(g0, 2); r > 1e-9 {
		t.Fatalf("h-residual ‖Hh̄ − ∇L̂₀‖/‖∇L̂₀‖ = %.3g", r)
	}
	F := func(w []float64) float64 {
		th := solveWeighted(model, s.Data, w, theta, 1, 3000)
		return model.InnerLoss(th, nil, s.Data[0].Val, nil)
	}
	const eps = 1e-5
	for j := range k {
		wp, wm := slices.Clone(w), slices.Clone(w)
		wp[j] += eps
		wm[j] -= eps
		fd := (F(wp) - F(wm)) / (2 * eps)
		if math.Abs(fd-c.hyper[j]) > 1e-6*max(1, math.Abs(fd)) {
			t.Errorf("∇_%d F: hyper-gradient %.10g, finite differences %.10g", j+1, c.hyper[j], fd)
		}
	}
}

// linreg is least squares on rows (a, y) with y the last feature:
// l(θ; a, y) = ½(aᵀθ − y)², for App. B.
type linreg struct{ d int }

func (m linreg) DimX() int                                                       { return m.d }
func (m linreg) DimLambda() int                                                  { return 0 }
func (m linreg) Init(dst []float64, r *rand.Rand)                                { clear(dst) }
func (m linreg) Clone() models.Bilevel[float64]                                  { return m }
func (m linreg) Accuracy(x, _ []float64, d *datasets.Dataset, idx []int) float64 { return 0 }
func (m linreg) rowsOf(d *datasets.Dataset, idx []int) []int {
	if idx != nil {
		return idx
	}
	out := make([]int, d.N)
	for i := range out {
		out[i] = i
	}
	return out
}
func (m linreg) InnerLoss(x, _ []float64, d *datasets.Dataset, idx []int) float64 {
	var l float64
	rows := m.rowsOf(d, idx)
	for _, i := range rows {
		r := d.Row(i)
		e := floats.Dot(r[:m.d], x) - r[m.d]
		l += 0.5 * e * e
	}
	return l / float64(len(rows))
}
func (m linreg) InnerGrad(dst, x, _ []float64, d *datasets.Dataset, idx []int) float64 {
	clear(dst)
	rows := m.rowsOf(d, idx)
	var l float64
	for _, i := range rows {
		r := d.Row(i)
		e := floats.Dot(r[:m.d], x) - r[m.d]
		l += 0.5 * e * e
		floats.AddScaled(dst, e/float64(len(rows)), r[:m.d])
	}
	return l / float64(len(rows))
}
func (m linreg) InnerHVP(dst, x, _ []float64, d *datasets.Dataset, idx []int, u []float64) {
	clear(dst)
	rows := m.rowsOf(d, idx)
	for _, i := range rows {
		r := d.Row(i)
		floats.AddScaled(dst, floats.Dot(r[:m.d], u)/float64(len(rows)), r[:m.d])
	}
}
func (m linreg) InnerCross(dst, x, _ []float64, d *datasets.Dataset, idx []int, u []float64) {}
func (m linreg) OuterGrad(dstX, _, x, _ []float64, d *datasets.Dataset, idx []int) float64 {
	return m.InnerGrad(dstX, x, nil, d, idx)
}

// App. B: with one design matrix shared by every node (so the empirical
// E[xxᵀ] is shared) and y = xᵀθ_k*, θ̂(w) = Σ w_k θ_k* and F is the
// quadratic ½(Σ w_k θ_k* − θ₀*)ᵀ Σ̂ (Σ w_k θ_k* − θ₀*): the method's θ̄
// and hyper-gradient match both closed forms, and projected gradient on w
// decreases F monotonically.
func TestWeightedLinearRegression(t *testing.T) {
	const k, d, n = 4, 3, 60
	r := rand.New(rand.NewPCG(3, 4))
	a := make([]float64, n*d)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	stars := make([][]float64, k+1)
	data := make([]datasets.ClientData, k+1)
	for j := range stars {
		stars[j] = []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		ds := &datasets.Dataset{X: make([]float64, n*(d+1)), Y: make([]int, n), N: n, D: d + 1, C: 1}
		for i := range n {
			copy(ds.X[i*(d+1):], a[i*d:(i+1)*d])
			ds.X[i*(d+1)+d] = floats.Dot(a[i*d:(i+1)*d], stars[j])
		}
		data[j] = datasets.ClientData{Train: ds, Val: ds, Test: ds}
	}
	// θ₀* near the hull of nodes 1 and 2: F is smallest on their weights.
	for c := range d {
		stars[0][c] = 0.5*stars[1][c] + 0.5*stars[2][c]
	}
	ds0 := data[0].Train
	for i := range n {
		ds0.X[i*(d+1)+d] = floats.Dot(a[i*d:(i+1)*d], stars[0])
	}
	s := weightedSetup(t, k, 0, linreg{d}, data)
	sigma := func(u, v []float64) float64 { // uᵀ Σ̂ v
		var q float64
		for i := range n {
			q += floats.Dot(a[i*d:(i+1)*d], u) * floats.Dot(a[i*d:(i+1)*d], v)
		}
		return q / n
	}
	alg := exactWeighted(12)
	alg.LR, alg.HLR, alg.Eta, alg.Cap = 0.3, 0.3, 0.2, 0.6
	center, reps := runWeighted(t, alg, s)
	c := center.(*wnCenter)
	var prevF, firstF float64
	for step, rep := range reps {
		used := centerResult(t, rep).WUsed
		mix := make([]float64, d)
		for j, wj := range used {
			floats.AddScaled(mix, wj, stars[j+1])
		}
		diff := slices.Clone(mix)
		floats.Sub(diff, stars[0])
		F := 0.5 * sigma(diff, diff)
		if step == len(reps)-1 {
			if dist := floats.Distance(mix, c.theta, 2); dist > 1e-8 {
				t.Errorf("θ̄ is %.3g from Σ w_k θ_k*", dist)
			}
			// Eq. (13) differentiates θ̂(w) = Σ w_k θ_k* / Σ w_k, which
			// agrees with the closed form on the simplex: the gradients
			// agree up to a multiple of (1, …, 1), which the simplex's
			// tangent space Σ dw_k = 0 does not see.
			want := make([]float64, k)
			for j := range k {
				want[j] = sigma(stars[j+1], diff)
			}
			mh, mw := floats.Sum(c.hyper)/k, floats.Sum(want)/k
			for j := range k {
				if got := c.hyper[j] - mh; math.Abs(got-(want[j]-mw)) > 1e-8 {
					t.Errorf("∇_%d F (centered) = %.10g, closed form %.10g", j+1, got, want[j]-mw)
				}
			}
		}
		if step > 0 && F > prevF+1e-12 {
			t.Errorf("outer %d: F rose from %.6g to %.6g", step, prevF, F)
		}
		prevF = F
		if step == 0 {
			firstF = F
		}
	}
	if prevF > firstF/5 {
		t.Errorf("F went from %.4g to %.4g in %d projected gradient steps", firstF, prevF, len(reps)-1)
	}
	// Alg. 2 (ABA) on the same convex problem: its returned iterate w_ag
	// brings F down as well.
	alg.Method = "aba"
	_, reps = runWeighted(t, alg, s)
	wag := centerResult(t, reps[len(reps)-1]).W
	mix := make([]float64, d)
	for j, wj := range wag {
		floats.AddScaled(mix, wj, stars[j+1])
	}
	floats.Sub(mix, stars[0])
	if F := 0.5 * sigma(mix, mix); F > firstF/5 {
		t.Errorf("ABA: F(w_ag) = %.4g after %d steps, from %.4g", F, len(reps), firstF)
	}
}

// Local-SVRG with τ = 1 converges linearly to argmin Σ w_k L̂_k; with τ > 1
// it stops in a neighbourhood (client drift).
func TestLocalSVRGConvergence(t *testing.T) {
	const k = 3
	s := weightedSetup(t, k, 0.1, nil, nil)
	want := solveWeighted(s.Model.Clone(), s.Data, fed.Uniform(k), s.X0, 1, 3000)
	lr := 0.1
	errAt := func(tau, syncs int) float64 {
		alg := &LocalSVRG{Baseline: fed.Baseline{WeightedCommon: fed.WeightedCommon{Outer: 1, Epochs: 1, Tau: tau, LR: lr, Batch: 4}, Syncs: syncs},
			SVRGParam: SVRGParam{Q: 0.1}}
		center, _ := runWeighted(t, alg, s)
		return floats.Distance(center.(*fed.Server).Strategy.(*fed.Averaging).X, want, 2) / floats.Norm(want, 2)
	}
	e1, e2 := errAt(1, 1500), errAt(1, 3000)
	if e2 > 1e-6 || e2 > 0.1*e1 {
		t.Errorf("τ = 1: relative error %.3g after 1500 averagings, %.3g after 3000: not linear", e1, e2)
	}
	// τ = 5: a neighbourhood, which shrinks with the step.
	e5 := errAt(5, 600)
	lr = 0.025
	e5small := errAt(5, 2400)
	if e5 < 10*e2 || e5 > 0.2 || e5small > e5/2 {
		t.Errorf("τ = 5: relative error %.3g at γ = 0.1, %.3g at γ = 0.025 (τ = 1: %.3g); want a neighbourhood shrinking with γ", e5, e5small, e2)
	}
	t.Logf("relative error: τ=1 %.3g (1500), %.3g (3000); τ=5 %.3g (γ = 0.1), %.3g (γ = 0.025)", e1, e2, e5, e5small)
}

// Every method runs, stays finite, is deterministic, and the bilevel
// method keeps its weights on the capped simplex.
func TestWeightedMethodsRun(t *testing.T) {
	const k = 4
	algs := weightedAlgs(3)
	for name, mk := range algs {
		var prev []float64
		for range 2 {
			center, reps := runWeighted(t, mk(), weightedSetup(t, k, 0.01, nil, nil))
			st := center.(optim.Observer).Observe()
			if !optim.AllFinite(st.X) || st.ValN == 0 || st.TestN == 0 || len(reps) != 3 {
				t.Fatalf("%s: stats %+v, %d phases", name, st, len(reps))
			}
			if prev != nil && !slices.Equal(prev, st.X) {
				t.Fatalf("%s: two runs differ", name)
			}
			prev = slices.Clone(st.X)
			if w := centerResult(t, reps[2]).W; w != nil {
				if math.Abs(floats.Sum(w)-1) > 1e-12 || floats.Max(w) > 0.4+1e-12 || floats.Min(w) < 0 {
					t.Errorf("%s: w = %v off the capped simplex", name, w)
				}
			}
			if name != "local-train" && centerResult(t, reps[2]).Syncs == 0 {
				t.Errorf("%s: no averaging counted", name)
			}
		}
	}
}

// centerResult reads the center's result from a phase report.
func centerResult(t *testing.T, rep optim.PhaseReport) CenterResult {
	t.Helper()
	r, err := optim.ResultOf[CenterResult](rep.Results[0])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// With output: average a solve returns Alg. 1's line 15, Σ_t u_t x^(t) /
// Σ_t u_t over every step t = 0 … T of the weighted average of the nodes'
// iterates, u_t = (1 − min{γμ, q/4})^−(t+1); with output: last the
// last averaged iterate. The reference is a naive loop of local gradient
// steps (full batches make every SVRG step one, whatever q) with u_t
// computed as written.
func TestWeightedOutputAverage(t *testing.T) {
	const k, tau, lr, q = 3, 3, 0.5, 0.8
	for _, mu := range []float64{0.3, 10} { // ρ = γμ = 0.15, and ρ = q/4 = 0.2
		for _, output := range []string{"last", "average"} {
			s := weightedSetup(t, k, 0.1, nil, nil)
			alg := &WeightedNodes{WeightedCommon: fed.WeightedCommon{Outer: 1, Epochs: 7, Tau: tau, LR: lr, Batch: 1000},
				SVRGParam: SVRGParam{Q: q}, HLR: 0.5, Eta: 0.5, Cap: 0.5, Method: "projected", Output: output, Mu: mu}
			center, _ := runWeighted(t, alg, s)
			got := center.(*wnCenter).theta

			model, dim := s.Model.Clone(), len(s.X0)
			steps := 9 // ⌈7 epochs⌉ full-batch steps, rounded up to 3 averagings of τ
			rho := min(lr*mu, q/4.0)
			xs := make([][]float64, k)
			for j := range xs {
				xs[j] = slices.Clone(s.X0)
			}
			g, virt := make([]float64, dim), make([]float64, dim)
			sum := make([]float64, dim)
			floats.AddScaled(sum, math.Pow(1-rho, -1), s.X0)
			total := math.Pow(1-rho, -1)
			for step := range steps {
				clear(virt)
				for j := range xs {
					model.InnerGrad(g, xs[j], nil, s.Data[j+1].Train, nil)
					floats.AddScaled(xs[j], -lr, g)
					floats.AddScaled(virt, 1.0/k, xs[j])
				}
				if (step+1)%tau == 0 {
					for j := range xs {
						copy(xs[j], virt)
					}
				}
				u := math.Pow(1-rho, -float64(step+2))
				floats.AddScaled(sum, u, virt)
				total += u
			}
			want := slices.Clone(virt)
			if output == "average" {
				floats.ScaleTo(want, 1/total, sum)
			}
			if d := floats.Distance(got, want, 2) / floats.Norm(want, 2); d > 1e-12 {
				t.Errorf("μ %v, output %s: θ is %.3g (relative) from the reference", mu, output, d)
			}
			if output == "average" {
				if d := floats.Distance(got, virt, 2); d < 1e-3 {
					t.Errorf("μ %v: the average is the last iterate (%.3g apart)", mu, d)
				}
			}
		}
	}
}
