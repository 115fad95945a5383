package graph

import (
	"fmt"

	"hgpsim/internal/rng"
)

func init() {
	LinkProcesses.Register("bernoulli",
		"Every link is up independently at every round with its probability δ̄ (the paper's model, Assumption 5).",
		func() LinkProcess { return &Bernoulli{} })
	LinkProcesses.Register("burst",
		"Bursty links: a link keeps its state for blocks of `length` rounds (each link's blocks start at its own offset), so the per-round probability stays δ̄ but realizations are no longer independent over time — HGP's Assumption 5 is broken on purpose, to study it.",
		func() LinkProcess { return &Burst{Length: 10} })
}

// MaxBurst bounds Burst.Length.
const MaxBurst = 1 << 20

// Bernoulli draws every link independently at every tick:
// up ⇔ rng.Uniform(seed, PurposeEdges, a, b, tick) < p.
type Bernoulli struct{}

// Validate implements LinkProcess.
func (*Bernoulli) Validate() error { return nil }

// Up implements LinkProcess.
func (*Bernoulli) Up(seed uint64, a, b int, p float64, tick uint64) bool {
	return rng.Uniform(seed, uint64(rng.PurposeEdges), uint64(a), uint64(b), tick) < p
}

// Burst holds each link's state for blocks of Length ticks: the tick is
// shifted by a per-link offset and divided by Length before the Bernoulli
// draw, so each block is one independent draw with probability p.
type Burst struct {
	Length int `yaml:"length" doc:"rounds a link keeps its state, 1 … 1048576 (1 = independent every round)"`
}

// Validate implements LinkProcess.
func (b *Burst) Validate() error {
	if b.Length < 1 || b.Length > MaxBurst {
		return fmt.Errorf("length must be in [1, %d] rounds, got %d", MaxBurst, b.Length)
	}
	return nil
}

// Up implements LinkProcess.
func (b *Burst) Up(seed uint64, i, j int, p float64, tick uint64) bool {
	if b.Length > 1 {
		offset := rng.Key(seed, uint64(rng.PurposeEdges), uint64(i), uint64(j)) % uint64(b.Length)
		tick = (tick + offset) / uint64(b.Length)
	}
	return rng.Uniform(seed, uint64(rng.PurposeEdges), uint64(i), uint64(j), tick) < p
}
