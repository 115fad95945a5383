package graph

import (
	"fmt"

	"hgpsim/internal/rng"
)

func init() {
	LinkProcesses.Register("gilbert-elliott",
		"Gilbert–Elliott links: each link is a two-state Markov chain (good, bad) delivering with probability good_delivery in the good state and bad_delivery in the bad one; mean_burst is the mean length of a bad period. The chain's stationary delivery probability is the link's δ̄, so it compares with bernoulli at equal δ̄; bursts of failures break the independence over time that HGP's Assumption 5 assumes.",
		func() LinkProcess { return &GilbertElliott{MeanBurst: 10, GoodDelivery: 1} })
}

// GilbertElliott is the two-state Markov link model, parameterized by the
// link's stationary delivery probability δ̄ and the mean bad-burst length.
type GilbertElliott struct {
	MeanBurst    float64 `yaml:"mean_burst" doc:"mean length of a bad period in rounds, 1 … 10⁶; needs mean_burst ≥ 1/π_good for each link (π_good below)"`
	GoodDelivery float64 `yaml:"good_delivery" doc:"delivery probability in the good state, in (0, 1]"`
	BadDelivery  float64 `yaml:"bad_delivery" doc:"delivery probability in the bad state, in [0, good_delivery); a link with δ̄ = p is good a share π_good = (p − bad)/(good − bad) of the time"`
}

// Validate implements LinkProcess.
func (g *GilbertElliott) Validate() error {
	switch {
	case !(g.MeanBurst >= 1 && g.MeanBurst <= 1e6):
		return fmt.Errorf("mean_burst must be in [1, 10⁶] rounds, got %v", g.MeanBurst)
	case !(g.GoodDelivery > 0 && g.GoodDelivery <= 1):
		return fmt.Errorf("good_delivery must be in (0, 1], got %v", g.GoodDelivery)
	case !(g.BadDelivery >= 0 && g.BadDelivery < g.GoodDelivery):
		return fmt.Errorf("bad_delivery must be in [0, good_delivery), got %v", g.BadDelivery)
	}
	return nil
}

// chain returns, for a link with δ̄ = p, the share of time in the good
// state and the refresh probability of the chain.
func (g *GilbertElliott) chain(p float64) (pGood, r float64) {
	pGood = (p - g.BadDelivery) / (g.GoodDelivery - g.BadDelivery)
	// A bad period ends with probability 1/MeanBurst per round, which is
	// r·pGood in the refresh form of the chain.
	return pGood, 1 / (g.MeanBurst * pGood)
}

// ValidateLink checks that a link with δ̄ = p can be realized: the chain's
// good share must be a probability and its refresh probability at most 1.
func (g *GilbertElliott) ValidateLink(p float64) error {
	pGood, r := g.chain(p)
	switch {
	case pGood < 0 || pGood > 1:
		return fmt.Errorf("a link with δ̄ = %g is outside [bad_delivery, good_delivery] = [%g, %g]", p, g.BadDelivery, g.GoodDelivery)
	case r > 1:
		return fmt.Errorf("a link with δ̄ = %g is good %.3g of the time, which needs mean_burst ≥ %.3g", p, pGood, 1/pGood)
	}
	return nil
}

// Up implements LinkProcess.
func (g *GilbertElliott) Up(seed uint64, a, b int, p float64, tick uint64) bool {
	pGood, r := g.chain(p)
	deliver := g.BadDelivery
	if markovUp(seed, linkKey(a, b), tick, r, pGood) {
		deliver = g.GoodDelivery
	}
	if deliver >= 1 {
		return true
	}
	return rng.Uniform(seed, uint64(rng.PurposeEdges), uint64(a), uint64(b), tick, 3) < deliver
}
