package optim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// Helpers the algorithm families share: checks of restored state and the
// server's client sampling.

// CheckLens returns an error naming the first vector (in name order)
// whose saved length got[0] is not want[1], skipping those nil marks as
// absent.
func CheckLens(who string, lens map[string][2]int, absent map[string]bool) error {
	names := make([]string, 0, len(lens))
	for n := range lens {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if l := lens[n]; !absent[n] && l[0] != l[1] {
			return fmt.Errorf("%s: a saved %s of length %d, the run's has %d", who, n, l[0], l[1])
		}
	}
	return nil
}

// IsPerm reports whether p is a permutation of 0 … len(p)−1.
func IsPerm(p []int) bool {
	seen := make([]bool, len(p))
	for _, v := range p {
		if v < 0 || v >= len(p) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// SampleClients draws k of clients 1 … m without replacement, ascending.
func SampleClients(r *rand.Rand, m, k int, dst []int) []int {
	dst = dst[:0]
	for _, p := range r.Perm(m)[:k] {
		dst = append(dst, p+1)
	}
	slices.Sort(dst)
	return dst
}

// CheckSample returns an error unless chosen is a sample of at most k of
// the clients 1 … m, ascending and without repeats.
func CheckSample(who string, chosen []int, m, k int) error {
	if len(chosen) > k {
		return fmt.Errorf("%s: a saved sample of %d clients, the run samples %d", who, len(chosen), k)
	}
	for n, c := range chosen {
		if c < 1 || c > m {
			return fmt.Errorf("%s: a saved sample holds client %d, the run has clients 1 … %d", who, c, m)
		}
		if n > 0 && c <= chosen[n-1] {
			return fmt.Errorf("%s: a saved sample that is not ascending", who)
		}
	}
	return nil
}
