package rng

import "math/rand/v2"

// Purpose names what a stream is used for, so that adding a new consumer of
// randomness never shifts the draws of an existing one.
type Purpose uint64

// Purposes used across hgpsim. New purposes are appended; values never change.
const (
	PurposeTopology  Purpose = 1  // drawing a static graph or δ̄
	PurposeEdges     Purpose = 2  // per-round edge realizations
	PurposeData      Purpose = 3  // synthetic data generation
	PurposePartition Purpose = 4  // splitting data among clients
	PurposeBatch     Purpose = 5  // minibatch sampling
	PurposeInit      Purpose = 6  // parameter initialization
	PurposeHyper     Purpose = 7  // hyper-gradient minibatches
	PurposeSample    Purpose = 8  // a server's sampling of clients
	PurposeCoin      Purpose = 9  // a node's own random decisions (e.g. SVRG reference refreshes)
	PurposeNoise     Purpose = 10 // corrupting data (label noise)
	PurposeLayout    Purpose = 11 // experiment-level draws (shards, rotations, permutations)
	PurposeSketch    Purpose = 12 // shared hashes and signs of sketches
	PurposeDraw      Purpose = 13 // an algorithm's scheduling draws (e.g. a truncation index)
)

// Global marks a stream that belongs to no single client.
const Global = -1

// Mix is the SplitMix64 finalizer: a bijection on uint64 with good avalanche,
// used to turn structured keys into independent-looking seeds.
func Mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Key folds any number of integers into one 64-bit key, order-sensitively.
func Key(seed uint64, parts ...uint64) uint64 {
	h := Mix(seed)
	for _, p := range parts {
		h = Mix(h ^ Mix(p+0x632be59bd9b4e019))
	}
	return h
}

// New returns the stream for (seed, client, purpose). Client is a client
// index or Global.
func New(seed uint64, client int, purpose Purpose) *rand.Rand {
	return rand.New(source(seed, client, purpose))
}

func source(seed uint64, client int, purpose Purpose) *rand.PCG {
	k := Key(seed, uint64(int64(client)), uint64(purpose))
	return rand.NewPCG(k, Mix(k^0xda942042e4dd58b5))
}

// Stream is the stream New returns, with the same draws, whose position
// can be saved and restored: a checkpointed run saves the streams that
// outlive a phase.
type Stream struct {
	*rand.Rand
	src *rand.PCG
}

// NewStream returns the stream for (seed, client, purpose), as New.
func NewStream(seed uint64, client int, purpose Purpose) *Stream {
	src := source(seed, client, purpose)
	return &Stream{Rand: rand.New(src), src: src}
}

// MarshalBinary encodes the stream's position.
func (s *Stream) MarshalBinary() ([]byte, error) { return s.src.MarshalBinary() }

// UnmarshalBinary moves the stream to a position MarshalBinary encoded.
func (s *Stream) UnmarshalBinary(b []byte) error { return s.src.UnmarshalBinary(b) }

// Uniform returns a value in [0, 1) that depends only on its keys: the same
// keys give the same value in every process and at every moment.
func Uniform(seed uint64, parts ...uint64) float64 {
	return float64(Key(seed, parts...)>>11) / (1 << 53)
}
