package vec

import "math"

// LogSumExp returns log Σ exp(z_j), shifted by max z so that no exp
// overflows and the largest term is exactly 1 (so the sum is never 0).
func LogSumExp(z []float64) float64 {
	m := z[0]
	for _, v := range z[1:] {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, 0) {
		// All -Inf, or a +Inf logit: the shift would give NaN from Inf-Inf;
		// the mathematical limit is m itself.
		return m
	}
	var s float64
	for _, v := range z {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}
