package compress

import "slices"

// topIndices writes into idx (reused, returned) the indices of the k
// entries of largest |x_i|, ascending, ties to the lower index, in O(d)
// expected time: a quickselect finds the k-th largest magnitude, then one
// pass collects the larger ones and the ties from the lowest index up.
// scratch is reused for the magnitudes.
func topIndices(x []float64, k int, idx []int, scratch []float64) ([]int, []float64) {
	idx = idx[:0]
	k = min(max(k, 0), len(x))
	if k == 0 {
		return idx, scratch
	}
	scratch = scratch[:0]
	for _, v := range x {
		if v < 0 {
			v = -v
		}
		scratch = append(scratch, v)
	}
	thr := kthLargest(scratch, k)
	above := 0
	for _, v := range x {
		if v < 0 {
			v = -v
		}
		if v > thr {
			above++
		}
	}
	ties := k - above
	for i, v := range x {
		if v < 0 {
			v = -v
		}
		switch {
		case v > thr:
			idx = append(idx, i)
		case v == thr && ties > 0:
			idx = append(idx, i)
			ties--
		}
	}
	return idx, scratch
}

// kthLargest returns the k-th largest value of a (1-based), reordering a.
func kthLargest(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	target := k - 1 // position in descending order
	for lo < hi {
		// Median of three as the pivot (deterministic).
		mid := lo + (hi-lo)/2
		p := []float64{a[lo], a[mid], a[hi]}
		slices.Sort(p)
		pivot := p[1]
		i, j := lo, hi
		for i <= j {
			for a[i] > pivot {
				i++
			}
			for a[j] < pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case target <= j:
			hi = j
		case target >= i:
			lo = i
		default:
			return a[target]
		}
	}
	return a[target]
}
