package fbo

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/optimtest"
)

// fboSetup is a star of m clients (equal data sizes) around a server, with
// a tiny tanh hyper-representation model.
func fboSetup(t *testing.T, m int, star *graph.Star, mu float64) *optim.Setup {
	t.Helper()
	data, err := datasets.Synthetic(datasets.SyntheticSpec{Clients: m + 1, Classes: 3, Features: 4,
		Train: 12, Val: 6, Test: 10, Alpha: 0.5, Separation: 1, Shift: 0.5, Noise: 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	return optimtest.StarSetup(t, star, data, models.NewHyperRep[float64](4, 3, 3, mu, false), 5)
}

// countingServer wraps the server's behaviour and counts, as the driver
// steps it, runtime rounds and rounds in which uploads arrived.
type countingServer struct {
	*server
	rounds, uploadRounds, uploads int
}

func (c *countingServer) Enter(p *optim.PhaseSpec) (optim.Behaviour, error) {
	if _, err := c.server.Enter(p); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *countingServer) Receive(r *optim.Round, in []optim.Message) error {
	c.rounds++
	got := 0
	for _, m := range in {
		if m.From != 0 {
			got++
		}
	}
	if got > 0 {
		c.uploadRounds++
		c.uploads += got
	}
	return c.server.Receive(r, in)
}

// runFBO runs alg (or prog instead of its program) on s sequentially and
// returns the counting server.
func runFBO(t *testing.T, alg optim.Algorithm, s *optim.Setup, prog optim.Program) *countingServer {
	t.Helper()
	var srv *countingServer
	optimtest.Execute(t, alg, s, prog, nil, func(i int, c optim.Client) optim.Client {
		if i == 0 {
			srv = &countingServer{server: c.(*server)}
			return srv
		}
		return c
	})
	return srv
}

func fboTestParams(n, k int) Params {
	p := defaultParams()
	p.OuterSteps, p.LowerSteps, p.Participation, p.Batch, p.EvalEvery, p.Tau = k, n, 1, 0, 2, 2
	p.Beta, p.Alpha, p.Lambda = 0.2, 0.05, 0.2
	return p
}

// The runtime executes exactly 2N+3 (FBO-AggITD), 2N+T+3 (FedNest) and
// N+1 (LFedNest) communication rounds per outer iteration, each a down and
// an up runtime round, with every sampled client uploading once per round.
func TestFBORoundsPerOuterIteration(t *testing.T) {
	const n, T, k, m = 3, 4, 5, 6
	for _, c := range []struct {
		alg  optim.Algorithm
		want int
	}{
		{&AggITD{Params: fboTestParams(n, k)}, 2*n + 3},
		{&FedNest{Params: fboTestParams(n, k), Neumann: T, Variant: "deterministic"}, 2*n + T + 3},
		{&LFedNest{Params: fboTestParams(n, k), Neumann: T}, n + 1},
	} {
		s := fboSetup(t, m, &graph.Star{Prob: 1}, 0.1)
		srv := runFBO(t, c.alg, s, nil)
		if srv.rounds != 2*k*c.want || srv.uploadRounds != k*c.want || srv.uploads != m*k*c.want {
			t.Errorf("%T: %d runtime rounds, %d with uploads, %d uploads; want %d, %d, %d",
				c.alg, srv.rounds, srv.uploadRounds, srv.uploads, 2*k*c.want, k*c.want, m*k*c.want)
		}
	}
	// Stochastic FedNest: 2N+T'+3 with T' < T, so fewer rounds in total.
	s := fboSetup(t, m, &graph.Star{Prob: 1}, 0.1)
	srv := runFBO(t, &FedNest{Params: fboTestParams(n, k), Neumann: T, Variant: "stochastic"}, s, nil)
	if srv.uploadRounds < k*(2*n+3) || srv.uploadRounds > k*(2*n+T+2) {
		t.Errorf("stochastic FedNest: %d upload rounds, want in [%d, %d]", srv.uploadRounds, k*(2*n+3), k*(2*n+T+2))
	}
}

// Lost uploads are missing from the server's means; the run still
// completes and every lost upload is counted by the driver.
func TestFBODroppedUploads(t *testing.T) {
	s := fboSetup(t, 6, &graph.Star{Prob: 1, ToHub: 0.5}, 0.1)
	srv := runFBO(t, &AggITD{Params: fboTestParams(3, 4)}, s, nil)
	if full := 6 * 4 * 9; srv.uploads >= full || srv.uploads == 0 {
		t.Errorf("%d uploads arrived with upload links up half the time, want in (0, %d)", srv.uploads, full)
	}
	if !optim.AllFinite(srv.x) || !optim.AllFinite(srv.y) {
		t.Error("non-finite global model")
	}
}

// One-Round-Lower with full batches, full participation and τ_i = 1 is
// centralized gradient descent on g = mean g_i (the svrg and sgd types
// alike).
func TestFBOLowerIsGradientDescent(t *testing.T) {
	const n, m = 4, 5
	for _, lower := range []string{"svrg", "sgd"} {
		s := fboSetup(t, m, &graph.Star{Prob: 1}, 0.1)
		p := fboTestParams(n, 1)
		p.Lower = lower
		alg := &FedNest{Params: p, Neumann: 0, Variant: "deterministic"}
		srv := runFBO(t, alg, s, nil)

		x0 := make([]float64, s.Model.DimLambda())
		s.Model.(models.LambdaInitializer).InitLambda(x0, rng.New(s.Seed, 0, rng.PurposeInit))
		y := append([]float64(nil), s.X0...)
		g, gi := make([]float64, len(y)), make([]float64, len(y))
		for range n {
			clear(g)
			for i := 1; i <= m; i++ {
				s.Model.InnerGrad(gi, y, x0, s.Data[i].Train, nil)
				floats.AddScaled(g, 1/float64(m), gi)
			}
			floats.AddScaled(y, -p.Beta, g)
		}
		if d := floats.Distance(y, srv.y, math.Inf(1)); d > 1e-12 {
			t.Errorf("%s: y after N rounds differs from gradient descent by %.2e", lower, d)
		}
	}
}

// denseHypergradient returns ∇f(x) = ∇_xf − ∇²_xy g [∇²_yy g]⁻¹ ∇_yf at
// y*(x) (found by gradient descent), built from the exact products column
// by column on the pooled client problem.
func denseHypergradient(t *testing.T, s *optim.Setup, x []float64, m int) (hyper, hinvF []float64) {
	t.Helper()
	mod := s.Model.Clone()
	dy, dx := mod.DimX(), mod.DimLambda()
	y := append([]float64(nil), s.X0...)
	g, gi := make([]float64, dy), make([]float64, dy)
	sumY := func(f func(dst []float64, i int)) []float64 {
		out := make([]float64, dy)
		for i := 1; i <= m; i++ {
			f(gi, i)
			floats.AddScaled(out, 1/float64(m), gi)
		}
		return out
	}
	for range 5000 {
		copy(g, sumY(func(dst []float64, i int) { mod.InnerGrad(dst, y, x, s.Data[i].Train, nil) }))
		floats.AddScaled(y, -0.3, g)
	}
	if floats.Norm(g, 2) > 1e-12 {
		t.Fatalf("lower level not solved: ‖∇_y g‖ = %.2e", floats.Norm(g, 2))
	}
	hess := mat.NewDense(dy, dy, nil)
	cross := mat.NewDense(dx, dy, nil)
	e := make([]float64, dy)
	for j := range dy {
		clear(e)
		e[j] = 1
		col := sumY(func(dst []float64, i int) { mod.InnerHVP(dst, y, x, s.Data[i].Train, nil, e) })
		hess.SetCol(j, col)
		cc := make([]float64, dx)
		ci := make([]float64, dx)
		for i := 1; i <= m; i++ {
			mod.InnerCross(ci, y, x, s.Data[i].Train, nil, e)
			floats.AddScaled(cc, 1/float64(m), ci)
		}
		cross.SetCol(j, cc)
	}
	fy, fx := make([]float64, dy), make([]float64, dx)
	fyi, fxi := make([]float64, dy), make([]float64, dx)
	for i := 1; i <= m; i++ {
		mod.OuterGrad(fyi, fxi, y, x, s.Data[i].Val, nil)
		floats.AddScaled(fy, 1/float64(m), fyi)
		floats.AddScaled(fx, 1/float64(m), fxi)
	}
	var v mat.VecDense
	if err := v.SolveVec(hess, mat.NewVecDense(dy, fy)); err != nil {
		t.Fatal(err)
	}
	var cv mat.VecDense
	cv.MulVec(cross, &v)
	for k := range fx {
		fx[k] -= cv.AtVec(k)
	}
	return fx, v.RawVector().Data
}

// In the deterministic limit (full participation and batches, no drops, N
// large) the mean over Q of AggITD's h, enumerating Q = 0 … N, and
// FedNest's h with a long Neumann series approach the dense hyper-gradient.
func TestFBOHypergradientLimit(t *testing.T) {
	const m, n = 4, 60
	s := fboSetup(t, m, &graph.Star{Prob: 1}, 0.5)
	x0 := make([]float64, s.Model.DimLambda())
	s.Model.(models.LambdaInitializer).InitLambda(x0, rng.New(s.Seed, 0, rng.PurposeInit))
	want, hinvF := denseHypergradient(t, s, x0, m)

	p := fboTestParams(n, 1)
	p.Beta, p.Lambda = 0.3, 0.3
	mean := make([]float64, len(want))
	for q := 0; q <= n; q++ {
		alg := &AggITD{Params: p}
		rounds := 2 * (2*n + 3)
		prog := &optim.Phases{{Name: "fbo-aggitd", Rounds: rounds, Tick: optim.Continue, Args: optim.EncodeArgs(phaseArgs{Draws: []int{q}})}}
		srv := runFBO(t, alg, fboSetup(t, m, &graph.Star{Prob: 1}, 0.5), prog)
		floats.AddScaled(mean, 1/float64(n+1), srv.h)
	}
	t.Logf("‖∇f‖ = %.3e; AggITD relative error %.2e", floats.Norm(want, 2), floats.Distance(mean, want, 2)/floats.Norm(want, 2))
	if e := floats.Distance(mean, want, 2) / floats.Norm(want, 2); e > 1e-3 {
		t.Errorf("AggITD: E_Q h is %.2e away from the dense hyper-gradient (relative)", e)
	}
	fed := runFBO(t, &FedNest{Params: p, Neumann: 150, Variant: "deterministic"}, fboSetup(t, m, &graph.Star{Prob: 1}, 0.5), nil)
	pFed := make([]float64, len(hinvF))
	(&FedNest{Params: p, Neumann: 150, Variant: "deterministic"}).hyperP(pFed, fed.server)
	if e := floats.Distance(pFed, hinvF, 2) / floats.Norm(hinvF, 2); e > 1e-3 {
		t.Errorf("FedNest: p is %.2e away from [∇²_yy g]⁻¹∇_y f (relative)", e)
	}
	t.Logf("FedNest relative error %.2e", floats.Distance(fed.h, want, 2)/floats.Norm(want, 2))
	if e := floats.Distance(fed.h, want, 2) / floats.Norm(want, 2); e > 1e-3 {
		t.Errorf("FedNest: h is %.2e away from the dense hyper-gradient (relative)", e)
	}
}

// E_Q of AggITD's p = λ(N+1)z^N, enumerating Q = 0 … N through the runtime,
// equals the trajectory sum λ Σ_{Q=0}^{N} Π_{t=N}^{Q+1}(I − λ∇²_yy g(y^t))
// ∇_y f(y^Q) over the lower iterates y^t (computed here from scratch by
// gradient descent, which One-Round-Lower is in this setting).
func TestAggITDExpectedP(t *testing.T) {
	const m, n = 3, 4
	s := fboSetup(t, m, &graph.Star{Prob: 1}, 0.2)
	p := fboTestParams(n, 1)
	x0 := make([]float64, s.Model.DimLambda())
	s.Model.(models.LambdaInitializer).InitLambda(x0, rng.New(s.Seed, 0, rng.PurposeInit))
	mod := s.Model.Clone()
	dy := mod.DimX()
	mean := func(f func(dst []float64, i int)) []float64 {
		out, tmp := make([]float64, dy), make([]float64, dy)
		for i := 1; i <= m; i++ {
			f(tmp, i)
			floats.AddScaled(out, 1/float64(m), tmp)
		}
		return out
	}
	ys := [][]float64{append([]float64(nil), s.X0...)}
	for range n {
		y := ys[len(ys)-1]
		g := mean(func(dst []float64, i int) { mod.InnerGrad(dst, y, x0, s.Data[i].Train, nil) })
		next := append([]float64(nil), y...)
		floats.AddScaled(next, -p.Beta, g)
		ys = append(ys, next)
	}
	want := make([]float64, dy)
	tmpX := make([]float64, mod.DimLambda())
	for q := 0; q <= n; q++ {
		v := mean(func(dst []float64, i int) { mod.OuterGrad(dst, tmpX, ys[q], x0, s.Data[i].Val, nil) })
		for tt := q + 1; tt <= n; tt++ {
			hv := mean(func(dst []float64, i int) { mod.InnerHVP(dst, ys[tt], x0, s.Data[i].Train, nil, v) })
			floats.AddScaled(v, -p.Lambda, hv)
		}
		floats.AddScaled(want, p.Lambda, v)
	}
	got := make([]float64, dy)
	for q := 0; q <= n; q++ {
		prog := &optim.Phases{{Name: "fbo-aggitd", Rounds: 2 * (2*n + 3), Tick: optim.Continue, Args: optim.EncodeArgs(phaseArgs{Draws: []int{q}})}}
		srv := runFBO(t, &AggITD{Params: p}, fboSetup(t, m, &graph.Star{Prob: 1}, 0.2), prog)
		pQ := make([]float64, dy)
		(&AggITD{Params: p}).hyperP(pQ, srv.server) // λ(N+1)z^N, what the h round broadcasts
		floats.AddScaled(got, 1/float64(n+1), pQ)   // E_Q, Q ~ U{0 … N}
	}
	if d := floats.Distance(got, want, math.Inf(1)); d > 1e-12*max(1, floats.Norm(want, math.Inf(1))) {
		t.Errorf("E_Q p differs from the trajectory sum by %.2e (‖sum‖∞ = %.2e)", d, floats.Norm(want, math.Inf(1)))
	}
}
