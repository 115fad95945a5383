package pdbo

import (
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/graph"
	"hgpsim/models"
)

// eps32 is float32's machine epsilon, 2⁻²³.
const eps32 = 0x1p-23

// float32Problem is n softmax clients with label weights (λ ∈ ℝ³) at a
// random state z (float32 values), ω, linearized in float32 and, at the
// same point widened, in float64 for the dense oracle.
func float32Problem(t *testing.T, spec netSpec, n int, variant Variant, seed uint64) (*graph.Network, []Linearization[float32], []Linearization[float64]) {
	t.Helper()
	nw := buildNet(t, spec, n, seed)
	pBar := nw.ExpectedPushWeights()
	data := smallData(t, n, seed)
	r := rand.New(rand.NewPCG(seed, 3))
	m32 := models.LabelWeights(models.NewSoftmax[float32](4, 3, 0.5), 0.01)
	m64 := models.LabelWeights(models.NewSoftmax[float64](4, 3, 0.5), 0.01)
	l32, l64 := make([]Linearization[float32], n), make([]Linearization[float64], n)
	for i := range n {
		z32 := make([]float32, m32.DimX())
		for k := range z32 {
			z32[k] = float32(r.NormFloat64())
		}
		lam := []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		delta := make([]float64, n)
		for j := range delta {
			delta[j] = nw.Delta(j, i)
		}
		omega := 0.5 + r.Float64()
		l32[i] = Linearization[float32]{ID: i, N: n, Model: m32.Clone(), Inner: data[i].Train, Outer: data[i].Val,
			Lambda: lam, Z: z32, Omega: omega, PBar: pBar[i], DeltaBar: delta, Variant: variant, LR: 0.1, Seed: seed}
		l64[i] = Linearization[float64]{ID: i, N: n, Model: m64.Clone(), Inner: data[i].Train, Outer: data[i].Val,
			Lambda: lam, Z: widen(z32), Omega: omega, PBar: pBar[i], DeltaBar: delta, Variant: variant, LR: 0.1, Seed: seed}
	}
	return nw, l32, l64
}

// The float32 estimators reach the float64 dense oracle B̄(I − Ā)⁻¹c^y + c^λ,
// built at the same point widened, to float32 accuracy: a relative error
// under 100 ε₃₂ (1.2e-5; measured 0.3 … 3 ε₃₂ for HGP and exact, 18 … 20 ε₃₂
// for VR-HGP, whose w adds u and c^y each round), while they do compute in
// float32: not to the 1e-10 the float64 estimators reach (2e-15 at M = 600).
func TestFloat32EstimatorsReachFloat64Oracle(t *testing.T) {
	const n, M = 5, 600
	const tol = 100 * eps32
	for _, spec := range []netSpec{net("fully-connected"), {Name: "static-undirected", Params: &graph.StaticUndirected{EdgeProb: 0.6, Weights: "fmmc"}}} {
		for _, variant := range []Variant{AfterComm, BeforeComm} {
			t.Run(spec.Name+"/"+variant.String(), func(t *testing.T) {
				nw, l32, l64 := float32Problem(t, spec, n, variant, 21)
				oracle, err := FixedPointOracle(l64)
				if err != nil {
					t.Fatal(err)
				}
				kinds := map[string]struct {
					f32 func(Linearization[float32]) HyperEstimator
					f64 func(Linearization[float64]) HyperEstimator
				}{
					"hgp": {func(l Linearization[float32]) HyperEstimator { return NewHGP(l, Simultaneous) },
						func(l Linearization[float64]) HyperEstimator { return NewHGP(l, Simultaneous) }},
					"vr-hgp": {func(l Linearization[float32]) HyperEstimator { return NewVRHGP(l, 0.9, 0.1, Simultaneous) },
						func(l Linearization[float64]) HyperEstimator { return NewVRHGP(l, 0.9, 0.1, Simultaneous) }},
					"exact": {func(l Linearization[float32]) HyperEstimator { return NewExactBackprop(l, Simultaneous) },
						func(l Linearization[float64]) HyperEstimator { return NewExactBackprop(l, Simultaneous) }},
				}
				for name, k := range kinds {
					e32, e64 := make([]HyperEstimator, n), make([]HyperEstimator, n)
					for i := range n {
						e32[i], e64[i] = k.f32(l32[i]), k.f64(l64[i])
					}
					got32 := runEstimators(t, nw, e32, M)
					got64 := runEstimators(t, nw, e64, M)
					err32, err64 := relErr(got32, oracle), relErr(got64, oracle)
					t.Logf("%s: relative error float32 %.3g (%.0f ε₃₂), float64 %.3g", name, err32, err32/eps32, err64)
					if !(err32 <= tol) {
						t.Errorf("%s: float32 relative error %.3g > %.3g (100 ε₃₂)", name, err32, tol)
					}
					if err64 > 1e-10 {
						t.Errorf("%s: float64 relative error %.3g > 1e-10: the problem is not converged at M = %d", name, err64, M)
					}
					if err32 < 4*err64 || err32 < eps32/16 {
						t.Errorf("%s: float32 error %.3g is not above float64's %.3g: the estimator did not compute in float32", name, err32, err64)
					}
				}
			})
		}
	}
}

// x = z/ω of a float32 linearization is z·(1/ω) in float64 rounded once,
// the bits optim.PushSumPair.Debias gives, so that an estimator shares the
// SGP's x rather than forming a copy.
func TestFloat32SharedXHasDebiasBits(t *testing.T) {
	z := []float32{1, 3, -7.25, 1e-3}
	omega := 0.3
	x := make([]float32, len(z))
	for k, v := range z {
		x[k] = float32(1 / omega * float64(v))
	}
	lin := Linearization[float32]{Z: z, X: x, Omega: omega}
	if sharedX(lin) == nil {
		t.Fatal("sharedX refuses an x with Debias's bits")
	}
	x[2] = math.Nextafter32(x[2], 0)
	if sharedX(lin) != nil {
		t.Fatal("sharedX accepts an x one ulp off z/ω")
	}
}
