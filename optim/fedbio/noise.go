package fedbio

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/models"
)

// NoiseStats says where the λ-weighted training objective Σ_j λ_j ℓ(y; s_j)
// of the clients puts its weight at a model y: on the mislabelled samples
// (N) or the clean ones (C). It is what decides whether reweighting can
// help: FedAvg is hurt by the noise only as far as the noisy samples'
// gradient g_N = Σ_{j∈N} λ_j ∇ℓ(y; s_j) pulls against the clean one g_C.
type NoiseStats struct {
	// LambdaNoisy and LambdaClean are the mean λ over the noisy and the
	// clean samples.
	LambdaNoisy, LambdaClean float64
	// LossShare is Σ_{j∈N} λ_j ℓ_j / Σ_j λ_j ℓ_j, the noisy samples' share
	// of the weighted loss (regularizer left out).
	LossShare float64
	// GradShare is ‖g_N‖ / (‖g_N‖ + ‖g_C‖), the noisy samples' share of
	// the weighted gradient's norm.
	GradShare float64
	// Cosine is cos(g_N, g_C): −1 when the noisy samples pull straight
	// against the clean ones (0 when either gradient is zero).
	Cosine float64
}

// MeasureNoise returns the NoiseStats of the clients' data at model x:
// data[i], noisy[i] and lambda[i] are client i's training set, its record
// of corrupted rows and its weights (nil lambda: all 1). Empty datasets
// are skipped. It costs a forward and backward pass per sample.
func MeasureNoise(loss *models.SampleWeighted[float64], x []float64, data []*datasets.Dataset, noisy [][]bool, lambda [][]float64) NoiseStats {
	d := loss.Dim()
	gN, gC, g := make([]float64, d), make([]float64, d), make([]float64, d)
	var lossN, lossC, sumN, sumC float64
	var nN, nC int
	l2 := loss.L2()
	reg := 0.5 * l2 * floats.Dot(x, x)
	var rowsN, rowsC []int
	for i, ds := range data {
		if ds == nil || ds.N == 0 {
			continue
		}
		if len(noisy[i]) != ds.N || (lambda[i] != nil && len(lambda[i]) != ds.N) {
			panic("fedbio: MeasureNoise: a client's noisy record or λ does not match its data")
		}
		rowsN, rowsC = rowsN[:0], rowsC[:0]
		for j := range ds.N {
			w := 1.0
			if lambda[i] != nil {
				w = lambda[i][j]
			}
			if noisy[i][j] {
				rowsN = append(rowsN, j)
				sumN += w
			} else {
				rowsC = append(rowsC, j)
				sumC += w
			}
		}
		// Grad and Loss average over the rows and add the regularizer:
		// undo both to get the sums.
		add := func(dst []float64, rows []int) float64 {
			if len(rows) == 0 {
				return 0
			}
			n := float64(len(rows))
			l := loss.Grad(g, x, lambda[i], ds, rows)
			floats.AddScaled(g, -l2, x)
			floats.AddScaled(dst, n, g)
			return n * (l - reg)
		}
		lossN += add(gN, rowsN)
		lossC += add(gC, rowsC)
		nN += len(rowsN)
		nC += len(rowsC)
	}
	var st NoiseStats
	if nN > 0 {
		st.LambdaNoisy = sumN / float64(nN)
	}
	if nC > 0 {
		st.LambdaClean = sumC / float64(nC)
	}
	if t := lossN + lossC; t > 0 {
		st.LossShare = lossN / t
	}
	a, b := floats.Norm(gN, 2), floats.Norm(gC, 2)
	if a+b > 0 {
		st.GradShare = a / (a + b)
	}
	if a > 0 && b > 0 {
		st.Cosine = math.Max(-1, math.Min(1, floats.Dot(gN, gC)/(a*b)))
	}
	return st
}
