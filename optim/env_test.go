package optim

import (
	"testing"

	"hgpsim/internal/rng"
)

// An Env's streams are the run's streams of (seed, node, purpose): the
// same draws as internal/rng gives any other consumer of that name, and
// different draws for another node or purpose.
func TestEnvStreamsAreTheRunsStreams(t *testing.T) {
	e := Env{Seed: 42, N: 5, Self: 3}
	want := rng.New(42, 3, rng.PurposeCoin).Uint64()
	if got := e.Rand(rng.PurposeCoin).Uint64(); got != want {
		t.Errorf("Rand: first draw %d, want rng.New's %d", got, want)
	}
	if got := e.Stream(rng.PurposeCoin).Uint64(); got != want {
		t.Errorf("Stream: first draw %d, want rng.New's %d", got, want)
	}
	other := Env{Seed: 42, N: 5, Self: 4}
	if other.Rand(rng.PurposeCoin).Uint64() == want || e.Rand(rng.PurposeDraw).Uint64() == want {
		t.Error("another node or purpose drew the same first value")
	}
}
