package fbo

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/optimtest"
)

// withCodeModel plans its algorithm on the setup's problem with the
// released code's model options: dropout and the norm penalty.
type withCodeModel struct{ optim.Algorithm }

func (w withCodeModel) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	s.Model = models.NewHyperRepWith[float64](4, 3, 3, 0.1, false, models.HyperRepOptions{Dropout: 0.5, NormPenalty: true})
	return w.Algorithm.Plan(s)
}

// FedNest's released variant computes, with full batches and full
// participation, what a naive loop over the clients computes: c_i = p₀, then
// T times c_i ← (I − λ∇²_yyG_i)c_i, uploads p_{t−1} + c_i, p_t the mean of
// every upload so far; p = λp_T.
func TestFedNestReleasedNeumann(t *testing.T) {
	const m, n, T = 3, 2, 3
	p := fboTestParams(n, 1)
	alg := &FedNest{Params: p, Neumann: T, Variant: "released"}
	srv := runFBO(t, alg, fboSetup(t, m, &graph.Star{Prob: 1}, 0.2), nil)

	s := fboSetup(t, m, &graph.Star{Prob: 1}, 0.2)
	mod := s.Model.Clone()
	x0 := make([]float64, mod.DimLambda())
	mod.(models.LambdaInitializer).InitLambda(x0, rng.New(s.Seed, 0, rng.PurposeInit))
	y := srv.y // y^N: the rounds after the lower ones change x only
	dy := len(y)
	p0 := make([]float64, dy)
	tmp, tmpX := make([]float64, dy), make([]float64, mod.DimLambda())
	for i := 1; i <= m; i++ {
		mod.OuterGrad(tmp, tmpX, y, x0, s.Data[i].Val, nil)
		floats.AddScaled(p0, 1/float64(m), tmp)
	}
	ctr := make([][]float64, m+1)
	for i := 1; i <= m; i++ {
		ctr[i] = slices.Clone(p0)
	}
	prev := slices.Clone(p0)
	var ups [][]float64
	for range T {
		for i := 1; i <= m; i++ {
			mod.InnerHVP(tmp, y, x0, s.Data[i].Train, nil, ctr[i])
			floats.AddScaled(ctr[i], -p.Lambda, tmp)
			u := slices.Clone(prev)
			floats.Add(u, ctr[i])
			ups = append(ups, u)
		}
		clear(prev)
		for _, u := range ups {
			floats.AddScaled(prev, 1/float64(len(ups)), u)
		}
	}
	floats.Scale(p.Lambda, prev)
	got := make([]float64, dy)
	alg.hyperP(got, srv.server)
	if d := floats.Distance(got, prev, math.Inf(1)); d > 1e-12*max(1, floats.Norm(prev, math.Inf(1))) || floats.Norm(prev, 2) == 0 {
		t.Errorf("released p differs from the naive loop by %.2e (‖p‖∞ = %.2e)", d, floats.Norm(prev, math.Inf(1)))
	}
	// It is not the textbook sum λΣ_{t=0}^{T} p_t.
	det := runFBO(t, &FedNest{Params: p, Neumann: T, Variant: "deterministic"}, fboSetup(t, m, &graph.Star{Prob: 1}, 0.2), nil)
	pd := make([]float64, dy)
	(&FedNest{Params: p, Neumann: T, Variant: "deterministic"}).hyperP(pd, det.server)
	if floats.Distance(pd, got, math.Inf(1)) < 1e-6*floats.Norm(pd, math.Inf(1)) {
		t.Error("released and deterministic p agree: the test cannot tell them apart")
	}
}

// uploadSets records, per upload round, the clients whose uploads arrived.
type uploadSets struct {
	*server
	sets [][]int
}

func (u *uploadSets) Enter(p *optim.PhaseSpec) (optim.Behaviour, error) {
	if _, err := u.server.Enter(p); err != nil {
		return nil, err
	}
	return u, nil
}

func (u *uploadSets) Receive(r *optim.Round, in []optim.Message) error {
	if r.Up() {
		var s []int
		for _, m := range in {
			if m.From != 0 {
				s = append(s, m.From)
			}
		}
		slices.Sort(s)
		u.sets = append(u.sets, s)
	}
	return u.server.Receive(r, in)
}

func recordSets(t *testing.T, alg optim.Algorithm) [][]int {
	t.Helper()
	var rec *uploadSets
	optimtest.Execute(t, alg, fboSetup(t, 10, &graph.Star{Prob: 1}, 0.1), nil, nil, func(i int, c optim.Client) optim.Client {
		if i == 0 {
			rec = &uploadSets{server: c.(*server)}
			return rec
		}
		return c
	})
	return rec.sets
}

// With redraw the server draws S afresh at every lower round (both rounds
// of a lower iteration keep it) and, for FedNest, once more for p₀, the
// Neumann, h and upper rounds; without, S is one set per outer iteration.
// The rounds per iteration do not change.
func TestFBORedraw(t *testing.T) {
	const n, T = 4, 2
	p := fboTestParams(n, 1)
	p.Participation = 0.3
	groups := func(sets [][]int, starts []int) {
		t.Helper()
		distinct := 0
		for k, lo := range starts {
			hi := len(sets)
			if k+1 < len(starts) {
				hi = starts[k+1]
			}
			for r := lo; r < hi; r++ {
				if len(sets[r]) != 3 || !slices.Equal(sets[r], sets[lo]) {
					t.Errorf("round %d: uploads from %v, want the 3 clients %v of its draw", r, sets[r], sets[lo])
				}
			}
			if k > 0 && !slices.Equal(sets[lo], sets[starts[k-1]]) {
				distinct++
			}
		}
		if distinct == 0 {
			t.Error("every draw gave the same S")
		}
	}
	r := p
	r.Redraw = true
	agg := recordSets(t, &AggITD{Params: r})
	if len(agg) != 2*n+3 {
		t.Fatalf("AggITD: %d upload rounds, want %d", len(agg), 2*n+3)
	}
	// Draws at t = 0 … N (lower-a); the h and upper rounds keep t = N's S.
	groups(agg, []int{0, 2, 4, 6, 8})
	fed := recordSets(t, &FedNest{Params: r, Neumann: T, Variant: "deterministic"})
	if len(fed) != 2*n+T+3 {
		t.Fatalf("FedNest: %d upload rounds, want %d", len(fed), 2*n+T+3)
	}
	groups(fed, []int{0, 2, 4, 6, 8})
	once := recordSets(t, &AggITD{Params: p})
	for k, s := range once {
		if !slices.Equal(s, once[0]) {
			t.Errorf("without redraw: round %d's uploads %v, the iteration's S %v", k, s, once[0])
		}
	}
}

// With lost downloads a client may miss Neumann rounds; the released
// variant then starts its term from the p it gets, and the run completes
// with a finite model.
func TestFedNestReleasedLostDownloads(t *testing.T) {
	p := fboTestParams(3, 6)
	p.Participation, p.Batch = 0.5, 4
	s := fboSetup(t, 8, &graph.Star{Prob: 0.6, ToHub: 0.8}, 0.1)
	srv := runFBO(t, &FedNest{Params: p, Neumann: 4, Variant: "released"}, s, nil)
	if !optim.AllFinite(srv.x) || !optim.AllFinite(srv.y) || srv.uploads == 0 {
		t.Errorf("finite x %v, y %v, %d uploads", optim.AllFinite(srv.x), optim.AllFinite(srv.y), srv.uploads)
	}
}
