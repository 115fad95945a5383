package fedbio

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"hgpsim/compress"
	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/optimtest"
)

// fedBioSetup is a server and m clients with noisy synthetic data.
func fedBioSetup(t *testing.T, m int, star *graph.Star, noise string) *optim.Setup {
	t.Helper()
	src := &datasets.NoisyLabels{Images: "synthetic", Train: 40, Val: 30, Test: 50, Noise: noise, Rho: 0.4,
		RhoMin: 0.2, RhoMax: 0.9, Features: 4, Classes: 3}
	data, err := src.Load(m+1, 5)
	if err != nil {
		t.Fatal(err)
	}
	return optimtest.StarSetup(t, star, data, models.Plain(models.NewSoftmax[float64](4, 3, 1e-3)), 5)
}

// runFedBio runs an algorithm of the family and returns the server, the
// clients' results and the traffic.
func runFedBio(t *testing.T, a optim.Algorithm, s *optim.Setup) (*server, []ClientResult, optim.Traffic) {
	t.Helper()
	factory, prog, err := a.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	var srv *server
	var clients []*client
	wrapped := func(i int) (optim.Client, error) {
		c, err := factory(i)
		if err != nil {
			return nil, err
		}
		switch b := c.(*optim.Fixed).Behaviour.(type) {
		case *server:
			srv = b
		case *client:
			clients = append(clients, b)
		}
		return c, nil
	}
	d, err := optim.NewSequential(s.Net, wrapped)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := d.Execute(context.Background(), prog, optim.NoSink{})
	if err != nil {
		t.Fatal(err)
	}
	res := make([]ClientResult, len(clients))
	for i, c := range clients {
		var err error
		if res[i], err = ClientResultOf(c.Result()); err != nil {
			t.Fatal(err)
		}
	}
	return srv, res, tr
}

func iterConfig(comp string, rounds int) *CommFedBiO {
	a := &CommFedBiO{FederatedTraining: optim.FederatedTraining{Rounds: rounds, Participation: 1, LocalSteps: 3, LR: 0.1, Batch: 16, EvalEvery: 1},
		Hypergradient: "iterative", Compressor: comp, Compression: 4, Iterations: 6, Alpha: 0.3, SketchRows: 3,
		Ratio: 2, HVPBatch: 0, OuterLR: 0.1, Scale: "per-sample"}
	return a
}

// Uncompressed Iter from v⁰ = 0 is the truncated Neumann series
// α Σ_{i<I} (I − αH)ⁱ ∇F of the clients' size-weighted Hessian at the
// averaged model.
func TestCommFedBiOIterIsNeumann(t *testing.T) {
	s := fedBioSetup(t, 3, &graph.Star{Prob: 1}, "iid")
	a := iterConfig("none", 1)
	a.OuterLR = 0 // λ stays 1: H is the plain Hessian
	srv, _, _ := runFedBio(t, a, s)
	loss := srv.loss
	d := loss.Dim()
	hvp := func(dst, u []float64) {
		clear(dst)
		tmp := make([]float64, d)
		var total float64
		for i := 1; i <= 3; i++ {
			total += float64(s.Data[i].Train.N)
		}
		for i := 1; i <= 3; i++ {
			loss.HVP(tmp, srv.x, nil, s.Data[i].Train, nil, u)
			floats.AddScaled(dst, float64(s.Data[i].Train.N)/total, tmp)
		}
	}
	term := append([]float64(nil), srv.gradF...)
	sum := make([]float64, d)
	hu := make([]float64, d)
	for range a.Iterations {
		floats.Add(sum, term)
		hvp(hu, term)
		floats.AddScaled(term, -a.Alpha, hu)
	}
	floats.Scale(a.Alpha, sum)
	if e := floats.Distance(sum, srv.v, 2) / floats.Norm(sum, 2); e > 1e-12 {
		t.Errorf("v^I is %.3g (relative) from the Neumann series", e)
	}
}

// denseSPD returns a random d×d SPD matrix with eigenvalues decaying from
// 1 to 1/4 and its product.
func denseSPD(r *rand.Rand, d int) (*mat.SymDense, func(dst, u []float64)) {
	q := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			q.Set(i, j, r.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(q)
	var Q mat.Dense
	qr.QTo(&Q)
	h := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			var s float64
			for k := range d {
				s += Q.At(i, k) * Q.At(j, k) * math.Pow(0.25, float64(k)/float64(d-1))
			}
			h.SetSym(i, j, s)
		}
	}
	return h, func(dst, u []float64) {
		var out mat.VecDense
		out.MulVec(h, mat.NewVecDense(d, append([]float64(nil), u...)))
		copy(dst, out.RawVector().Data)
	}
}

// Non-iter with identity sketches is exact; with sparse embeddings the
// error falls as r1 and r2 grow.
func TestNonIterSketchedSolve(t *testing.T) {
	const d = 40
	r := rand.New(rand.NewPCG(1, 2))
	h, hvp := denseSPD(r, d)
	g := make([]float64, d)
	for i := range g {
		g[i] = r.NormFloat64()
	}
	var vstar mat.VecDense
	var chol mat.Cholesky
	chol.Factorize(h)
	if err := chol.SolveVecTo(&vstar, mat.NewVecDense(d, append([]float64(nil), g...))); err != nil {
		t.Fatal(err)
	}
	solve := func(s1, s2 *compress.SparseEmbedding) float64 {
		a := make([]float64, s1.Rows()*s2.Rows())
		SketchedHessian(a, s1, s2, hvp, make([]float64, d), make([]float64, d), make([]float64, s2.Rows()))
		b := make([]float64, s2.Rows())
		s2.Apply(b, g)
		om, err := SketchedSolve(a, b, s1.Rows())
		if err != nil {
			t.Fatal(err)
		}
		v := make([]float64, d)
		s1.ApplyT(v, om)
		return floats.Distance(v, vstar.RawVector().Data, 2) / floats.Norm(vstar.RawVector().Data, 2)
	}
	id := compress.IdentityEmbedding(d)
	if e := solve(id, id); e > 1e-9 {
		t.Errorf("identity sketches: relative error %.3g", e)
	}
	prev := math.Inf(1)
	// S₁ᵀω̂ lies in the span of S₁'s rows: coordinates hashed to one row
	// move together, so the error falls as r1 outgrows d (fewer
	// collisions) and r2 with it.
	for _, sz := range [][2]int{{d / 2, 2 * d}, {2 * d, 8 * d}, {8 * d, 16 * d}} {
		var errs []float64
		const seeds = 11
		for seed := range seeds {
			s1, _ := compress.NewSparseEmbedding(sz[0], d, uint64(seed))
			s2, _ := compress.NewSparseEmbedding(sz[1], d, uint64(seed+100))
			errs = append(errs, solve(s1, s2))
		}
		slices.Sort(errs)
		med := errs[seeds/2]
		t.Logf("r1=%d r2=%d: median relative error %.3g", sz[0], sz[1], med)
		if med >= prev {
			t.Errorf("r1=%d r2=%d: median error %.3g did not fall (previous %.3g)", sz[0], sz[1], med, prev)
		}
		prev = med
	}
}

// Every variant and baseline runs over a star whose uploads are dropped
// with probability 0.3: finite, deterministic, drops counted, messages of
// the announced sizes.
func TestFedBioFamilyWithDrops(t *testing.T) {
	star := &graph.Star{Prob: 1, ToHub: 0.7}
	algs := map[string]optim.Algorithm{
		"iter-none":   iterConfig("none", 4),
		"iter-topk":   iterConfig("topk", 4),
		"iter-sketch": iterConfig("sketch", 4),
		"oracle":      &FedAvgOracle{FederatedTraining: iterConfig("none", 4).FederatedTraining},
		"preprocess":  &FedBioPreprocess{FederatedTraining: iterConfig("none", 4).FederatedTraining, BenchSteps: 50, BenchLR: 0.5, Threshold: 0.2},
	}
	ni := iterConfig("none", 4)
	ni.Hypergradient = "non-iterative"
	algs["non-iter"] = ni
	for name, a := range algs {
		if err := a.Validate(5); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		srvA, resA, trA := runFedBio(t, a, fedBioSetup(t, 4, star, "non-iid"))
		srvB, resB, _ := runFedBio(t, a, fedBioSetup(t, 4, star, "non-iid"))
		if trA.Dropped == 0 {
			t.Errorf("%s: nothing dropped", name)
		}
		if !optim.AllFinite(srvA.x) {
			t.Fatalf("%s: non-finite model", name)
		}
		for k := range srvA.x {
			if math.Float64bits(srvA.x[k]) != math.Float64bits(srvB.x[k]) {
				t.Fatalf("%s: two runs differ", name)
			}
		}
		fa, _, _ := F1(resA)
		fb, _, _ := F1(resB)
		if fa != fb {
			t.Errorf("%s: F1 %v vs %v", name, fa, fb)
		}
		if name == "oracle" && fa != 1 {
			t.Errorf("oracle F1 = %v, want 1", fa)
		}
		v, err := ServerResultOf(srvA.Result())
		if err != nil {
			t.Fatal(err)
		}
		if ca, ok := a.(*CommFedBiO); ok {
			d := srvA.loss.Dim()
			k, rows, cols, r1, r2 := ca.Sizes(d)
			want := map[string]int{"iter-none": d, "iter-topk": 2 * k, "iter-sketch": rows * cols, "non-iter": r1 * r2}[name]
			if v.HyperMessageFloats != want {
				t.Errorf("%s: hyper uploads of %d floats, want %d", name, v.HyperMessageFloats, want)
			}
		}
		t.Logf("%s: F1 %.3f, uploads %v bytes, traffic %+v", name, fa, v.UploadBytes, trA)
	}
}

// scale: exact is the per-sample step divided by N: with η·N it gives the
// same λ as per-sample with η (one round, same v).
func TestCommFedBiOScale(t *testing.T) {
	weights := func(scale string, eta float64) []float64 {
		a := iterConfig("none", 1)
		a.Scale, a.OuterLR = scale, eta
		_, res, _ := runFedBio(t, a, fedBioSetup(t, 3, &graph.Star{Prob: 1}, "iid"))
		var out []float64
		for _, r := range res {
			out = append(out, r.Weights...)
		}
		return out
	}
	per := weights("per-sample", 0.05)
	exact := weights("exact", 0.05*3*40) // N = 3 clients × 40 samples
	moved := false
	for k := range per {
		if math.Abs(per[k]-exact[k]) > 1e-12 {
			t.Fatalf("λ_%d: per-sample %v, exact with η·N %v", k, per[k], exact[k])
		}
		moved = moved || per[k] != 1
	}
	if !moved {
		t.Error("no λ moved: the test proves nothing")
	}
}
