package optim

import (
	"fmt"

	"hgpsim/internal/rng"
)

// Batcher draws minibatches without replacement, reshuffling each epoch,
// from the client's own stream.
type Batcher struct {
	perm []int
	pos  int
	size int
	r    *rng.Stream
}

// BatcherState is a batcher's position: its permutation, where it is in
// it, and its stream's position (a field of a Stateful client's state).
type BatcherState struct {
	Perm []int
	Pos  int
	RNG  []byte
}

func (b *Batcher) save() (BatcherState, error) {
	r, err := b.r.MarshalBinary()
	return BatcherState{Perm: b.perm, Pos: b.pos, RNG: r}, err
}

// load restores a position save returned, for a batcher built alike.
func (b *Batcher) load(s BatcherState) error {
	if len(s.Perm) != len(b.perm) || s.Pos < 0 || s.Pos > len(s.Perm) {
		return fmt.Errorf("a saved minibatch position over %d examples (at %d) for a batcher over %d", len(s.Perm), s.Pos, len(b.perm))
	}
	if err := b.r.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("minibatch stream: %w", err)
	}
	copy(b.perm, s.Perm)
	b.pos = s.Pos
	return nil
}

// NewBatcher returns a Batcher of size examples out of n drawn from r;
// size 0 or ≥ n means the full batch.
func NewBatcher(n, size int, r *rng.Stream) *Batcher {
	b := &Batcher{perm: make([]int, n), r: r, size: size}
	for i := range b.perm {
		b.perm[i] = i
	}
	if size <= 0 || size >= n {
		b.size = 0 // full batch: idx == nil
		return b
	}
	b.shuffle()
	return b
}

func (b *Batcher) shuffle() {
	b.r.Shuffle(len(b.perm), func(i, j int) { b.perm[i], b.perm[j] = b.perm[j], b.perm[i] })
	b.pos = 0
}

// Next returns the next minibatch's example indices (nil: the full
// batch), valid until the following call.
func (b *Batcher) Next() []int {
	if b.size == 0 {
		return nil
	}
	if b.pos+b.size > len(b.perm) {
		b.shuffle()
	}
	idx := b.perm[b.pos : b.pos+b.size]
	b.pos += b.size
	return idx
}
