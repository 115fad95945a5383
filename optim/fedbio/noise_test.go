package fedbio

import (
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/datasets"
	"hgpsim/models"
)

// MeasureNoise against a naive loop over per-sample gradients and losses
// (SampleGrad), on an MLP with random weights λ, including a client whose
// λ is nil (all 1) and an empty one; and the oracle's λ (0 on the noisy
// samples) puts nothing on them.
func TestMeasureNoise(t *testing.T) {
	src := &datasets.NoisyLabels{Images: "synthetic", Train: 37, Val: 10, Test: 5, Noise: "non-iid", Flip: "pair",
		RhoMin: 0.2, RhoMax: 0.9, Features: 5, Classes: 4}
	cd, err := src.Load(4, 9)
	if err != nil {
		t.Fatal(err)
	}
	mlp := models.NewMLP[float64](5, 6, 4, 1e-2)
	loss := models.NewSampleWeighted[float64](mlp)
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, loss.Dim())
	loss.Init(x, r)
	for k := range x {
		x[k] += 0.3 * r.NormFloat64()
	}
	data := make([]*datasets.Dataset, len(cd))
	noisy := make([][]bool, len(cd))
	lambda := make([][]float64, len(cd))
	for i := range cd {
		data[i], noisy[i] = cd[i].Train, cd[i].Noisy
		if i >= 2 {
			lambda[i] = make([]float64, data[i].N)
			for j := range lambda[i] {
				lambda[i][j] = r.Float64()
			}
		}
	}
	got := MeasureNoise(loss, x, data, noisy, lambda)

	d := loss.Dim()
	gN, gC, g := make([]float64, d), make([]float64, d), make([]float64, d)
	var lN, lC, sN, sC, nN, nC float64
	for i, ds := range data {
		for j := range ds.N {
			w := 1.0
			if lambda[i] != nil {
				w = lambda[i][j]
			}
			l := loss.SampleGrad(g, x, ds, j)
			dst := gC
			if noisy[i][j] {
				dst, lN, sN, nN = gN, lN+w*l, sN+w, nN+1
			} else {
				lC, sC, nC = lC+w*l, sC+w, nC+1
			}
			for k := range g {
				dst[k] += w * g[k]
			}
		}
	}
	norm := func(v []float64) float64 {
		s := 0.0
		for _, a := range v {
			s += a * a
		}
		return math.Sqrt(s)
	}
	dot := 0.0
	for k := range gN {
		dot += gN[k] * gC[k]
	}
	want := NoiseStats{LambdaNoisy: sN / nN, LambdaClean: sC / nC, LossShare: lN / (lN + lC),
		GradShare: norm(gN) / (norm(gN) + norm(gC)), Cosine: dot / (norm(gN) * norm(gC))}
	if nN == 0 || nC == 0 {
		t.Fatalf("degenerate data: %v noisy, %v clean", nN, nC)
	}
	pairs := [][3]any{{"λ noisy", got.LambdaNoisy, want.LambdaNoisy}, {"λ clean", got.LambdaClean, want.LambdaClean},
		{"loss share", got.LossShare, want.LossShare}, {"grad share", got.GradShare, want.GradShare}, {"cosine", got.Cosine, want.Cosine}}
	for _, p := range pairs {
		a, b := p[1].(float64), p[2].(float64)
		if math.Abs(a-b) > 1e-9*(1+math.Abs(b)) {
			t.Errorf("%s: %v, naive %v", p[0], a, b)
		}
	}

	// The oracle's weights: nothing on the noisy samples.
	for i := range data {
		lambda[i] = make([]float64, data[i].N)
		for j := range lambda[i] {
			if !noisy[i][j] {
				lambda[i][j] = 1
			}
		}
	}
	o := MeasureNoise(loss, x, data, noisy, lambda)
	if o.LambdaNoisy != 0 || o.LambdaClean != 1 || o.LossShare != 0 || o.GradShare != 0 || o.Cosine != 0 {
		t.Errorf("oracle λ: %+v, want λ noisy 0, λ clean 1 and no share", o)
	}
}
