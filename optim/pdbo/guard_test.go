package pdbo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/models"
	"hgpsim/optim"
)

// starProblem is n quadratic clients on a star whose links are always up:
// the hub pushes to n−1 leaves, each leaf to the hub, so the push-sum
// weights settle at ω_hub = n²/(3n − 2) and ω_leaf = 2ω_hub/n (0.77 at
// n = 5). A guard with ε between the two is active at the leaves only.
func starProblem(t testing.TB, n int, lr, floor float64, seed uint64) *hyperProblem {
	t.Helper()
	p := newHyperProblem(t, net("star"), n, AfterComm, lr, seed)
	for i := range p.lins {
		p.lins[i].WeightFloor = floor
	}
	return p
}

// atFixedPoint returns lins moved to the fixed point y* of the expected
// (guarded) SGP map started from x0.
func atFixedPoint(t testing.TB, lins []Linearization[float64], pBar [][]float64, x0 []float64) []Linearization[float64] {
	t.Helper()
	z, omega, err := ExpectedFixedPoint(lins, pBar, x0, 2000000, 1e-15)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]Linearization[float64](nil), lins...)
	for i := range out {
		out[i].Z, out[i].Omega = z[i], omega[i]
	}
	return out
}

// outerAtFixedPoint is F̄(x*(λ), λ) = (1/n)Σ F_i at the fixed point of the
// expected map with the clients' λ replaced by lambda.
func outerAtFixedPoint(t testing.TB, lins []Linearization[float64], pBar [][]float64, x0 []float64, lambda [][]float64) float64 {
	t.Helper()
	ls := append([]Linearization[float64](nil), lins...)
	for i := range ls {
		ls[i].Lambda = lambda[i]
	}
	at := atFixedPoint(t, ls, pBar, x0)
	f := 0.0
	for _, l := range at {
		x := make([]float64, len(l.Z))
		floats.ScaleTo(x, 1/l.Omega, l.Z)
		f += l.Model.OuterGrad(make([]float64, len(x)), make([]float64, len(l.Lambda)), x, l.Lambda, l.Outer, nil)
	}
	return f / float64(len(at))
}

// The guarded map is what SGP runs: on a network without edge noise and
// with full batches SGP's iterates settle at the fixed point of the
// expected guarded map (ExpectedFixedPoint's own loops), which differs from
// the plain map's when the guard is active at the fixed point.
func TestGuardedSGPSettlesAtGuardedFixedPoint(t *testing.T) {
	const n, lr, floor, rounds = 5, 0.1, 1.0, 4000
	p := starProblem(t, n, lr, floor, 4)
	x0 := make([]float64, p.lins[0].Model.DimX())
	guarded := atFixedPoint(t, p.lins, p.pBar, x0)
	plainLins := append([]Linearization[float64](nil), p.lins...)
	for i := range plainLins {
		plainLins[i].WeightFloor = 0
	}
	plain := atFixedPoint(t, plainLins, p.pBar, x0)
	active := 0
	for _, l := range guarded {
		if l.Omega < floor {
			active++
		}
	}
	if active == 0 || active == n {
		t.Fatalf("the guard is active at %d of %d clients at y*: the test needs some of each", active, n)
	}

	for _, variant := range []struct {
		floor float64
		want  []Linearization[float64]
	}{{floor, guarded}, {0, plain}} {
		cfg := SGPConfig{Variant: AfterComm, LR: optim.Schedule{Kind: "constant", Base: lr}, WeightFloor: variant.floor}
		cs := make([]*SGP[float64], n)
		b := make([]optim.Behaviour, n)
		for i, l := range p.lins {
			cs[i] = NewSGPBilevel(i, n, l.Model, l.Lambda, datasets.ClientData{Train: noData}, x0, cfg, 1)
			b[i] = cs[i]
		}
		if err := runOnce(t, p.nw, "sgp", rounds, b); err != nil {
			t.Fatal(err)
		}
		worst, apart := 0.0, 0.0
		for i, c := range cs {
			want := make([]float64, len(x0))
			floats.ScaleTo(want, 1/variant.want[i].Omega, variant.want[i].Z)
			worst = math.Max(worst, floats.Distance(c.X(), want, math.Inf(1)))
			other := guarded[i]
			if variant.floor > 0 {
				other = plain[i]
			}
			floats.ScaleTo(want, 1/other.Omega, other.Z)
			apart = math.Max(apart, floats.Distance(c.X(), want, math.Inf(1)))
		}
		t.Logf("ε = %g: max |x_i − x_i*| = %.3g; %.3g from the other map's fixed point", variant.floor, worst, apart)
		if worst > 1e-9 {
			t.Errorf("ε = %g: SGP settles %.3g away from its expected map's fixed point", variant.floor, worst)
		}
		if apart < 1e-3 {
			t.Errorf("ε = %g: the two fixed points are only %.3g apart: the test cannot tell the maps apart", variant.floor, apart)
		}
	}
}

// The guarded oracle B̄(I − Ā)⁻¹c^y + c^λ at the guarded fixed point is the
// derivative of F̄(x*(λ), λ) through that fixed point (central differences
// of ExpectedFixedPoint), with the guard active at some clients; the plain
// oracle at the same point is not.
func TestGuardedOracleIsDerivativeOfGuardedFixedPoint(t *testing.T) {
	const n, lr, floor, h = 5, 0.1, 1.0, 1e-5
	p := starProblem(t, n, lr, floor, 4)
	x0 := make([]float64, p.lins[0].Model.DimX())
	at := atFixedPoint(t, p.lins, p.pBar, x0)
	got, err := FixedPointOracle(at)
	if err != nil {
		t.Fatal(err)
	}
	plainAt := append([]Linearization[float64](nil), at...)
	for i := range plainAt {
		plainAt[i].WeightFloor = 0
	}
	plain, err := FixedPointOracle(plainAt)
	if err != nil {
		t.Fatal(err)
	}
	lambda := make([][]float64, n)
	for i, l := range p.lins {
		lambda[i] = append([]float64(nil), l.Lambda...)
	}
	fd := make([][]float64, n)
	for i := range fd {
		fd[i] = make([]float64, len(lambda[i]))
		for k := range fd[i] {
			keep := lambda[i][k]
			lambda[i][k] = keep + h
			up := outerAtFixedPoint(t, p.lins, p.pBar, x0, lambda)
			lambda[i][k] = keep - h
			down := outerAtFixedPoint(t, p.lins, p.pBar, x0, lambda)
			lambda[i][k] = keep
			fd[i][k] = (up - down) / (2 * h)
		}
	}
	e, ePlain := relErr(got, fd), relErr(plain, fd)
	t.Logf("relative error against central differences: guarded oracle %.3g, plain oracle %.3g", e, ePlain)
	if e > 1e-6 {
		t.Errorf("the guarded oracle is %.3g (relative) from the derivative of the guarded fixed point", e)
	}
	if ePlain < 1e-3 {
		t.Errorf("the plain oracle is within %.3g of the guarded derivative: the guard changed nothing", ePlain)
	}
}

// On a network without edge noise HGP and VR-HGP reach the guarded oracle
// at a state where some weights are below ε and some above.
func TestEstimatorsReachGuardedOracle(t *testing.T) {
	const n, M, floor = 5, 300, 1.0
	p := starProblem(t, n, 0.1, floor, 6)
	below := 0
	for _, l := range p.lins {
		if l.Omega < floor {
			below++
		}
	}
	if below == 0 || below == n {
		t.Fatalf("%d of %d weights below ε: the test needs some of each", below, n)
	}
	oracle, err := FixedPointOracle(p.lins)
	if err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]func(Linearization[float64]) HyperEstimator{
		"hgp":    func(l Linearization[float64]) HyperEstimator { return NewHGP(l, Simultaneous) },
		"vr-hgp": func(l Linearization[float64]) HyperEstimator { return NewVRHGP(l, 0.9, 0.1, Simultaneous) },
	} {
		est := make([]HyperEstimator, n)
		for i, l := range p.lins {
			est[i] = mk(l)
		}
		if e := relErr(runEstimators(t, p.nw, est, M), oracle); e > 1e-6 {
			t.Errorf("%s: relative error %.3g against the guarded oracle after M = %d", name, e, M)
		}
	}
}

// A floor below every weight the run sees changes nothing, bit for bit:
// SGP's iterates, and the estimates from its linearization.
func TestWeightFloorBelowEveryWeightIsThePlainMethod(t *testing.T) {
	const n, rounds, M = 6, 150, 40
	nw := buildNet(t, net("stochastic-directed"), n, 9)
	r := rand.New(rand.NewPCG(9, 1))
	ms := make([]models.Bilevel[float64], n)
	lams := make([][]float64, n)
	for i := range ms {
		ms[i] = newQuadratic(r, 4, 3)
		lams[i] = []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	}
	x0 := make([]float64, 4)
	run := func(floor float64) (xs, hs [][]float64, minOmega float64) {
		cfg := SGPConfig{Variant: AfterComm, LR: optim.Schedule{Kind: "constant", Base: 0.2}, WeightFloor: floor}
		cs := make([]*SGP[float64], n)
		b := make([]optim.Behaviour, n)
		for i := range cs {
			cs[i] = NewSGPBilevel(i, n, ms[i], lams[i], datasets.ClientData{Train: noData}, x0, cfg, 1)
			b[i] = cs[i]
		}
		td := newTestDriver(t, nw)
		minOmega = math.Inf(1)
		for k := 0; k < rounds; k++ {
			if err := td.run("sgp", 1, b); err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				_, w := c.State()
				minOmega = math.Min(minOmega, w)
			}
		}
		est := make([]optim.Behaviour, n)
		for i, c := range cs {
			xs = append(xs, append([]float64(nil), c.X()...))
			est[i] = NewVRHGP(c.Linearize(noData, 0.2, 0, 1), 0.9, 0.1, Simultaneous)
		}
		if err := td.run("hgp", M, est); err != nil {
			t.Fatal(err)
		}
		for _, e := range est {
			hs = append(hs, e.(HyperEstimator).Estimate())
		}
		return xs, hs, minOmega
	}
	x0s, h0s, minOmega := run(0)
	floor := minOmega / 2
	x1s, h1s, _ := run(floor)
	for i := range x0s {
		for k := range x0s[i] {
			if math.Float64bits(x0s[i][k]) != math.Float64bits(x1s[i][k]) {
				t.Fatalf("client %d: x differs with ε = %g below min ω = %g", i, floor, minOmega)
			}
		}
		for k := range h0s[i] {
			if math.Float64bits(h0s[i][k]) != math.Float64bits(h1s[i][k]) {
				t.Fatalf("client %d: the estimate differs with ε = %g below min ω = %g", i, floor, minOmega)
			}
		}
	}
	// And one above some weight must change something, or the test is idle.
	x2s, _, _ := run(2 * minOmega)
	if floats.Distance(x0s[0], x2s[0], 2) == 0 && floats.Distance(x0s[n-1], x2s[n-1], 2) == 0 {
		t.Errorf("ε = %g above min ω = %g changed neither client 0 nor %d", 2*minOmega, minOmega, n-1)
	}
}

// The damped direct term (hypergradient.direct: damped) differs from the
// paper's form by exactly (α^M − 1)·⟨c^λ⟩_i, with ⟨c^λ⟩_i = γλ_i/n computed
// by hand for the quadratic clients (∂_λF_i = γλ_i), on the same edge
// realizations; for α = 1 (HGP) the two agree.
func TestDampedDirectTermIsAlphaToTheMTimesCLambda(t *testing.T) {
	const n, M = 4, 7
	for _, s := range []Sampling{Simultaneous, Alternate} {
		for _, alpha := range []float64{1, 0.9, 0.5} {
			p := newHyperProblem(t, net("stochastic-directed"), n, AfterComm, 0.2, 11)
			paper, damped := make([]HyperEstimator, n), make([]HyperEstimator, n)
			for i, l := range p.lins {
				paper[i], damped[i] = NewVRHGP(l, alpha, 0.1, s), NewVRHGPDamped(l, alpha, 0.1, s)
			}
			gp := runEstimators(t, p.nw, paper, s.Rounds(M))
			gd := runEstimators(t, p.nw, damped, s.Rounds(M))
			for i, l := range p.lins {
				gamma := l.Model.(*quadratic).gamma
				for k, lam := range l.Lambda {
					cl := gamma * lam / n
					want := (math.Pow(alpha, M) - 1) * cl
					if d := gd[i][k] - gp[i][k]; math.Abs(d-want) > 1e-13*(1+math.Abs(gp[i][k])) {
						t.Errorf("%s α = %g client %d λ_%d: damped − paper = %.17g, want (α^M − 1)γλ/n = %.17g", s, alpha, i, k, d, want)
					}
				}
			}
			if alpha < 1 && relErr(gd, gp) < 1e-3 {
				t.Errorf("%s α = %g: the damped and paper forms agree to %.3g: the direct term is too small to test", s, alpha, relErr(gd, gp))
			}
		}
	}
}

// The two options reach the clients' configuration from the sections, and
// bad values are refused with the key named.
func TestGuardAndDirectOptionsFromSections(t *testing.T) {
	sec, sgp := defaultSections()
	h := DefaultHypergradient()
	h.Estimator, h.Direct = "vr-hgp", "damped"
	sec["hypergradient"] = &h
	sgp.WeightFloor = 0.25
	s, err := ReadSections(sec)
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig(s, &optim.Setup{Net: buildNet(t, net("fully-connected"), 3, 1), Model: models.LabelWeights(models.NewLogistic[float64](1, 0), 0)})
	if cfg.SGP.WeightFloor != 0.25 || !cfg.DampDirect {
		t.Errorf("config: weight floor %g, damped %v; want 0.25, true", cfg.SGP.WeightFloor, cfg.DampDirect)
	}
	e := must(NewEstimator("vr-hgp", starProblem(t, 3, 0.1, 0, 1).lins[0], cfg))(t)
	if !e.(*VRHGP[float64]).damped {
		t.Error("vr-hgp with direct: damped built the paper's form")
	}
	h.Direct = "released"
	if err := h.Validate("label-weights"); err == nil || !strings.HasPrefix(err.Error(), "direct:") {
		t.Errorf("direct: released: got %v", err)
	}
	sgp.WeightFloor = -1
	if err := sgp.Validate(); err == nil || !strings.HasPrefix(err.Error(), "weight_floor:") {
		t.Errorf("weight_floor: -1: got %v", err)
	}
}
