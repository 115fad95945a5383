package optim

import (
	"errors"
	"fmt"
	"math"
)

// ProjectCappedSimplex writes into dst the Euclidean projection of v onto
// the capped simplex Δ_K^b = {w : Σ w_k = 1, 0 ≤ w_k ≤ b} (K = len(v)),
// the feasible set of the node weights of the weighted-nodes paper.
//
// The projection is w_k = clip(v_k − t, 0, b) for the threshold t at which
// the weights sum to one (the KKT conditions of min ½‖w − v‖² over Δ_K^b).
// Σ_k clip(v_k − t, 0, b) is continuous and non-increasing in t, so t is
// found by bisection on [min v − b, max v]; it is then recomputed exactly
// from the coordinates strictly between the bounds, so that the weights sum
// to one up to rounding. dst may alias v. The set is empty when K·b < 1,
// which is an error, and so are a non-finite v or b.
func ProjectCappedSimplex(dst, v []float64, b float64) error {
	k := len(v)
	switch {
	case k == 0:
		return errors.New("capped simplex: no coordinates")
	case len(dst) != k:
		return fmt.Errorf("capped simplex: len(dst) = %d, len(v) = %d", len(dst), k)
	case !(b > 0) || math.IsInf(b, 0):
		return fmt.Errorf("capped simplex: the cap b must be a finite number > 0, got %v", b)
	case float64(k)*b < 1-1e-12:
		return fmt.Errorf("capped simplex: K·b = %d·%v < 1, the set {Σw = 1, 0 ≤ w ≤ b} is empty (raise b to at least 1/K)", k, b)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("capped simplex: coordinate %d is %v", i, x)
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	lo -= b // every coordinate at the cap: the sum is K·b ≥ 1
	sum := func(t float64) float64 {
		var s float64
		for _, x := range v {
			s += min(max(x-t, 0), b)
		}
		return s
	}
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid <= lo || mid >= hi {
			break
		}
		if sum(mid) >= 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	t := 0.5 * (lo + hi)
	// Exact threshold from the free coordinates (0 < v_k − t < b).
	var free int
	var freeSum, capped float64
	for _, x := range v {
		switch d := x - t; {
		case d >= b:
			capped += b
		case d > 0:
			free++
			freeSum += x
		}
	}
	if free > 0 {
		if te := (freeSum + capped - 1) / float64(free); te >= lo-1e-12 && te <= hi+1e-12 {
			t = te
		}
	}
	for i, x := range v {
		dst[i] = min(max(x-t, 0), b)
	}
	return nil
}
