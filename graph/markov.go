package graph

import "hgpsim/internal/rng"

// markovUp returns the state at tick of a two-state Markov chain (up or
// down) with stationary probability pUp of being up, in which a tick
// "refreshes" the state with probability r (a fresh draw from the
// stationary distribution) and otherwise keeps it. That is the general
// two-state chain: P(up→down) = r·(1 − pUp) and P(down→up) = r·pUp, with
// mean sojourns 1/(r(1 − pUp)) up and 1/(r·pUp) down; tick 0 starts from
// the stationary distribution. The state is found by looking back for the
// last refresh, so it is a pure function of (seed, key, tick), costing
// about 1/r hashes — every party that asks agrees, in any order.
func markovUp(seed, key uint64, tick uint64, r, pUp float64) bool {
	const purpose = uint64(rng.PurposeEdges)
	for t := tick; ; t-- {
		if t == 0 || r >= 1 || rng.Uniform(seed, purpose, key, t, 1) < r {
			return rng.Uniform(seed, purpose, key, t, 2) < pUp
		}
	}
}

// linkKey folds a link (a, b) into one key for markovUp.
func linkKey(a, b int) uint64 { return rng.Key(uint64(a), uint64(b)) }

// nodeKey folds a node and the process's salt into one key for markovUp.
func nodeKey(salt uint64, i int) uint64 { return rng.Key(salt, uint64(i), 0x6e6f6465) }
