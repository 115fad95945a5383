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

// Save returns the batcher's position, for Load.
func (b *Batcher) Save() (BatcherState, error) {
	r, err := b.r.MarshalBinary()
	return BatcherState{Perm: b.perm, Pos: b.pos, RNG: r}, err
}

// Load restores a position Save returned, for a batcher built alike.
func (b *Batcher) Load(s BatcherState) error {
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

// NewBatcher returns a batcher of minibatches of size rows out of n drawn
// from r (size <= 0 or >= n: the full batch, which Next returns as nil).
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

// Next returns the next minibatch's row indices (nil: the full batch),
// valid until the next call.
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
