package pdbo

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
)

// quadratic is a test-only bilevel client with closed-form products:
//
//	f(x, λ) = ½ (x − a − Eλ)ᵀ Q (x − a − Eλ),   F(x, λ) = ½‖x − b‖² + ½γ‖λ‖²,
//
// so ∇ₓf = Q(x − a − Eλ), ∇²ₓf·u = Qu, (∂_λ∇ₓf)ᵀu = −EᵀQu, ∇ₓF = x − b,
// ∂_λF = γλ. It shares no code with models, so it checks the estimators
// and oracles independently.
type quadratic struct {
	q, e  [][]float64 // d×d SPD, d×k
	a, b  []float64
	gamma float64
}

func newQuadratic(r *rand.Rand, d, k int) *quadratic {
	m := make([][]float64, d)
	for i := range m {
		m[i] = make([]float64, d)
		for j := range m[i] {
			m[i][j] = r.NormFloat64() / math.Sqrt(float64(d))
		}
	}
	q := make([][]float64, d)
	for i := range q {
		q[i] = make([]float64, d)
		for j := range q[i] {
			for l := 0; l < d; l++ {
				q[i][j] += m[i][l] * m[j][l]
			}
		}
		q[i][i] += 0.5
	}
	e := make([][]float64, d)
	for i := range e {
		e[i] = make([]float64, k)
		for j := range e[i] {
			e[i][j] = r.NormFloat64()
		}
	}
	a, b := make([]float64, d), make([]float64, d)
	for i := range a {
		a[i], b[i] = 2*r.NormFloat64(), r.NormFloat64()
	}
	return &quadratic{q: q, e: e, a: a, b: b, gamma: 0.1}
}

func (m *quadratic) DimX() int                        { return len(m.a) }
func (m *quadratic) DimLambda() int                   { return len(m.e[0]) }
func (m *quadratic) Init(dst []float64, r *rand.Rand) { clear(dst) }
func (m *quadratic) Clone() models.Bilevel[float64]   { return m }
func (m *quadratic) Accuracy(x, l []float64, d *datasets.Dataset, idx []int) float64 {
	return 0
}

func (m *quadratic) resid(x, lambda []float64) []float64 {
	r := make([]float64, len(x))
	for i := range r {
		r[i] = x[i] - m.a[i]
		for j, l := range lambda {
			r[i] -= m.e[i][j] * l
		}
	}
	return r
}

func (m *quadratic) mulQ(dst, u []float64) {
	for i := range dst {
		dst[i] = floats.Dot(m.q[i], u)
	}
}

func (m *quadratic) InnerLoss(x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	r := m.resid(x, lambda)
	qr := make([]float64, len(r))
	m.mulQ(qr, r)
	return 0.5 * floats.Dot(r, qr)
}

func (m *quadratic) InnerGrad(dst, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	r := m.resid(x, lambda)
	m.mulQ(dst, r)
	return 0.5 * floats.Dot(r, dst)
}

func (m *quadratic) InnerHVP(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	m.mulQ(dst, u)
}

func (m *quadratic) InnerCross(dst, x, lambda []float64, d *datasets.Dataset, idx []int, u []float64) {
	qu := make([]float64, len(u))
	m.mulQ(qu, u)
	for j := range dst {
		dst[j] = 0
		for i := range qu {
			dst[j] -= m.e[i][j] * qu[i]
		}
	}
}

func (m *quadratic) OuterGrad(dx, dl, x, lambda []float64, d *datasets.Dataset, idx []int) float64 {
	f := 0.0
	for i := range dx {
		dx[i] = x[i] - m.b[i]
		f += 0.5 * dx[i] * dx[i]
	}
	for j := range dl {
		dl[j] = m.gamma * lambda[j]
		f += 0.5 * m.gamma * lambda[j] * lambda[j]
	}
	return f
}

// dummy data: the quadratic ignores it, but batchers need a size.
var noData = &datasets.Dataset{N: 1, D: 1, C: 2, X: []float64{0}, Y: []int{0}}

type hyperProblem struct {
	nw   *graph.Network
	lins []Linearization[float64]
	pBar [][]float64
}

// newHyperProblem linearizes n quadratic clients at a random state with
// the network's true p̄ and δ̄.
func newHyperProblem(t testing.TB, spec netSpec, n int, variant Variant, lr float64, seed uint64) *hyperProblem {
	t.Helper()
	return newHyperProblemDim(t, spec, n, 4, variant, lr, seed)
}

// newHyperProblemDim is newHyperProblem with quadratics of d dimensions
// (Ā has n·d rows).
func newHyperProblemDim(t testing.TB, spec netSpec, n, d int, variant Variant, lr float64, seed uint64) *hyperProblem {
	t.Helper()
	nw := buildNet(t, spec, n, seed)
	pBar := nw.ExpectedPushWeights()
	r := rand.New(rand.NewPCG(seed, 99))
	const k = 3
	lins := make([]Linearization[float64], n)
	for i := range lins {
		z := make([]float64, d)
		for j := range z {
			z[j] = r.NormFloat64()
		}
		lam := make([]float64, k)
		for j := range lam {
			lam[j] = r.NormFloat64()
		}
		deltaBar := make([]float64, n)
		for j := range deltaBar {
			deltaBar[j] = nw.Delta(j, i)
		}
		lins[i] = Linearization[float64]{ID: i, N: n, Model: newQuadratic(r, d, k), Inner: noData, Outer: noData,
			Lambda: lam, Z: z, Omega: 0.5 + r.Float64(), PBar: pBar[i], DeltaBar: deltaBar,
			Variant: variant, LR: lr, Seed: seed}
	}
	return &hyperProblem{nw: nw, lins: lins, pBar: pBar}
}

func runEstimators(t testing.TB, nw *graph.Network, est []HyperEstimator, rounds int) [][]float64 {
	t.Helper()
	b := make([]optim.Behaviour, len(est))
	for i, e := range est {
		b[i] = e
	}
	if err := runOnce(t, nw, "hgp", rounds, b); err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(est))
	for i, e := range est {
		out[i] = e.Estimate()
	}
	return out
}

func relErr(got, want [][]float64) float64 {
	var num, den float64
	for i := range got {
		for k := range got[i] {
			num += (got[i][k] - want[i][k]) * (got[i][k] - want[i][k])
			den += want[i][k] * want[i][k]
		}
	}
	return math.Sqrt(num / den)
}

// On networks without edge noise, HGP, VR-HGP and exact backprop converge
// to B̄(I − Ā)⁻¹c^y + c^λ.
func TestEstimatorsReachFixedPointOracle(t *testing.T) {
	const n, M = 6, 300
	for _, spec := range []netSpec{net("fully-connected"), {Name: "static-undirected", Params: &graph.StaticUndirected{EdgeProb: 0.5, Weights: "fmmc"}}} {
		for _, variant := range []Variant{AfterComm, BeforeComm} {
			for _, s := range []Sampling{Alternate, Simultaneous} {
				t.Run(spec.Name+"/"+variant.String()+"/"+s.String(), func(t *testing.T) {
					p := newHyperProblem(t, spec, n, variant, 0.1, 5)
					oracle, err := FixedPointOracle(p.lins)
					if err != nil {
						t.Fatal(err)
					}
					kinds := map[string]func(Linearization[float64]) HyperEstimator{
						"hgp":    func(l Linearization[float64]) HyperEstimator { return NewHGP(l, s) },
						"vr-hgp": func(l Linearization[float64]) HyperEstimator { return NewVRHGP(l, 0.9, 0.1, s) },
						"exact":  func(l Linearization[float64]) HyperEstimator { return NewExactBackprop(l, s) },
					}
					for name, mk := range kinds {
						est := make([]HyperEstimator, n)
						for i, l := range p.lins {
							est[i] = mk(l)
						}
						got := runEstimators(t, p.nw, est, s.Rounds(M))
						if e := relErr(got, oracle); e > 1e-6 {
							t.Errorf("%s: relative error %.3g > 1e-6 after M = %d", name, e, M)
						}
					}
					// The local baseline ignores the other clients: it must differ.
					loc := make([][]float64, n)
					for i, l := range p.lins {
						loc[i] = NewLocalHypergradient(l).Estimate()
					}
					if e := relErr(loc, oracle); e < 1e-3 {
						t.Errorf("local hyper-gradient is within %.3g of the oracle: the problem is too easy to tell estimators apart", e)
					}
				})
			}
		}
	}
}

// HGP is unbiased on stochastic directed networks: the mean of v⁽ᴹ⁾ over
// independent edge realizations is B̄Σ_{m<M}Āᵐc^y + c^λ, with alternate
// sampling (Eq. 9) and with simultaneous sampling, where B̂⁽ᵐ⁾ and Â⁽ᵐ⁾ come
// from the same round but B̂⁽ᵐ⁾ only ever multiplies u⁽ᵐ⁾, built from
// earlier rounds.
func TestHGPUnbiasedOnStochasticDirected(t *testing.T) {
	for _, c := range []struct {
		sampling Sampling
		variant  Variant
	}{{Alternate, AfterComm}, {Simultaneous, AfterComm}, {Simultaneous, BeforeComm}} {
		t.Run(c.sampling.String()+"/"+c.variant.String(), func(t *testing.T) {
			checkHGPUnbiased(t, c.sampling, c.variant)
		})
	}
}

func checkHGPUnbiased(t *testing.T, sampling Sampling, variant Variant) {
	const n, M, reps = 5, 4, 400
	p := newHyperProblem(t, net("stochastic-directed"), n, variant, 0.3, 8)
	want := TruncatedOracle(p.lins, M)
	dl := len(want[0])
	sum := make([]float64, n*dl)
	sumSq := make([]float64, n*dl)
	drv := newTestDriver(t, p.nw) // one driver: every repetition sees fresh ticks
	for r := 0; r < reps; r++ {
		est := make([]optim.Behaviour, n)
		hs := make([]*HGP[float64], n)
		for i, l := range p.lins {
			hs[i] = NewHGP(l, sampling)
			est[i] = hs[i]
		}
		if err := drv.run("hgp", sampling.Rounds(M), est); err != nil {
			t.Fatal(err)
		}
		for i, h := range hs {
			for k, v := range h.Estimate() {
				sum[i*dl+k] += v
				sumSq[i*dl+k] += v * v
			}
		}
	}
	worst := 0.0
	for i := 0; i < n; i++ {
		for k := 0; k < dl; k++ {
			mean := sum[i*dl+k] / reps
			sd := math.Sqrt(math.Max(sumSq[i*dl+k]/reps-mean*mean, 0))
			se := sd / math.Sqrt(reps)
			z := math.Abs(mean-want[i][k]) / math.Max(se, 1e-15)
			worst = math.Max(worst, z)
			if z > 3 {
				t.Errorf("client %d, λ[%d]: mean %.5g vs %.5g (%.1f standard errors)", i, k, mean, want[i][k], z)
			}
		}
	}
	t.Logf("largest deviation: %.2f standard errors over %d coordinates", worst, n*dl)
	// The estimator must actually be noisy here, or the test proves nothing.
	if sumSq[0]/reps-(sum[0]/reps)*(sum[0]/reps) < 1e-12 {
		t.Fatal("no variance across edge realizations")
	}
}

// VR-HGP with α = 1, β = 0 is HGP, bit for bit (App. B's w-update).
func TestVRHGPWithAlphaOneBetaZeroIsHGP(t *testing.T) {
	const n, M = 5, 30
	for _, variant := range []Variant{AfterComm, BeforeComm} {
		p := newHyperProblem(t, net("stochastic-directed"), n, variant, 0.3, 3)
		a, b := make([]HyperEstimator, n), make([]HyperEstimator, n)
		for i, l := range p.lins {
			a[i], b[i] = NewHGP(l, Alternate), NewVRHGP(l, 1, 0, Alternate)
		}
		ga := runEstimators(t, p.nw, a, 2*M)
		gb := runEstimators(t, p.nw, b, 2*M)
		for i := range ga {
			for k := range ga[i] {
				if math.Float64bits(ga[i][k]) != math.Float64bits(gb[i][k]) {
					t.Fatalf("%s client %d: HGP %v, VR-HGP(1,0) %v", variant, i, ga[i], gb[i])
				}
			}
		}
	}
}

func TestExactBackpropRefusesDirectedLinks(t *testing.T) {
	p := newHyperProblem(t, net("stochastic-directed"), 5, AfterComm, 0.3, 3)
	b := make([]optim.Behaviour, len(p.lins))
	for i, l := range p.lins {
		b[i] = NewExactBackprop(l, Alternate)
	}
	err := runOnce(t, p.nw, "exact", 20, b)
	if err == nil || !strings.Contains(err.Error(), "undirected") {
		t.Fatalf("exact backprop on a directed network: want an 'undirected' error, got %v", err)
	}
}

// The fixed-point oracle, linearized at the fixed point of the expected
// SGP map, approaches the consensus hyper-gradient as the step size → 0.
func TestFixedPointOracleApproachesConsensusOracle(t *testing.T) {
	const n = 4
	base := newHyperProblem(t, net("stochastic-directed"), n, AfterComm, 0.1, 12)
	cs := make([]ConsensusClient, n)
	for i, l := range base.lins {
		cs[i] = ConsensusClient{Model: l.Model, Inner: l.Inner, Outer: l.Outer, Lambda: l.Lambda}
	}
	x0 := make([]float64, base.lins[0].Model.DimX())
	xStar, err := PooledMinimizer(cs, x0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ConsensusOracle(cs, xStar)
	if err != nil {
		t.Fatal(err)
	}
	prev := math.Inf(1)
	for _, lr := range []float64{0.1, 0.01, 0.001} {
		lins := append([]Linearization[float64](nil), base.lins...)
		for i := range lins {
			lins[i].LR = lr
		}
		z, omega, err := ExpectedFixedPoint(lins, base.pBar, x0, 2000000, 1e-14)
		if err != nil {
			t.Fatal(err)
		}
		for i := range lins {
			lins[i].Z, lins[i].Omega = z[i], omega[i]
		}
		got, err := FixedPointOracle(lins)
		if err != nil {
			t.Fatal(err)
		}
		gap := relErr(got, want)
		t.Logf("α = %g: ‖fixed-point oracle − consensus oracle‖ / ‖consensus‖ = %.3g", lr, gap)
		if gap > prev/3 {
			t.Errorf("gap did not shrink with the step size: %.3g after %.3g", gap, prev)
		}
		prev = gap
	}
	if prev > 0.01 {
		t.Errorf("at α = 0.001 the oracles still differ by %.3g (relative)", prev)
	}
}

// The oracle does not exist when the Neumann series diverges (a step so
// large that ρ(Ā) ≥ 1) or when I − Ā is singular (no curvature: Ā is the
// row-stochastic P̄ ⊗ I); FixedPointOracle says which, with ρ(Ā) and min ω.
func TestFixedPointOracleReportsWhyItDoesNotExist(t *testing.T) {
	const n = 4
	p := newHyperProblem(t, net("stochastic-directed"), n, AfterComm, 0.1, 12)
	minOmega := math.Inf(1)
	for _, l := range p.lins {
		minOmega = math.Min(minOmega, l.Omega)
	}
	if _, err := FixedPointOracle(p.lins); err != nil {
		t.Fatalf("at step 0.1 the oracle should exist: %v", err)
	}

	big := append([]Linearization[float64](nil), p.lins...)
	for i := range big {
		big[i].LR = 5
	}
	_, err := FixedPointOracle(big)
	var oe *OracleError
	if !errors.As(err, &oe) {
		t.Fatalf("step 5: want an *OracleError, got %v", err)
	}
	if oe.Singular || oe.Status() != "diverges" || !(oe.Radius >= 1) || oe.MinOmega != minOmega {
		t.Errorf("step 5: got %+v (status %s), want diverges with ρ ≥ 1 and min ω %g", oe, oe.Status(), minOmega)
	}
	// Independently of the eigenvalues: the truncated Neumann sums blow up.
	if a, b := stackedNormOf(TruncatedOracle(big, 20)), stackedNormOf(TruncatedOracle(big, 40)); !(b > 100*a) {
		t.Errorf("ρ(Ā) = %.3g reported, but ‖Σ_{m<40}‖ = %.3g is not ≫ ‖Σ_{m<20}‖ = %.3g", oe.Radius, b, a)
	}
	t.Logf("step 5: %v", err)
	if !strings.Contains(err.Error(), "diverges") || !strings.Contains(err.Error(), "min ω") {
		t.Errorf("message %q does not say why", err)
	}

	flat := append([]Linearization[float64](nil), p.lins...)
	for i := range flat {
		q := *flat[i].Model.(*quadratic)
		q.q = make([][]float64, len(q.a))
		for k := range q.q {
			q.q[k] = make([]float64, len(q.a))
		}
		flat[i].Model = &q
	}
	_, err = FixedPointOracle(flat)
	if !errors.As(err, &oe) || !oe.Singular || oe.Status() != "singular" {
		t.Fatalf("no curvature: want a singular *OracleError, got %v", err)
	}
	t.Logf("no curvature: %v", err)
	if math.Abs(oe.Radius-1) > 1e-9 {
		t.Errorf("no curvature: ρ(P̄ ⊗ I) = %.17g, want 1", oe.Radius)
	}
}

func stackedNormOf(v [][]float64) float64 {
	s := 0.0
	for _, r := range v {
		s += floats.Dot(r, r)
	}
	return math.Sqrt(s)
}
