package graph

import (
	"fmt"

	"hgpsim/internal/rng"
)

func init() {
	Failures.Register("delay",
		"Late messages: a message is delayed, with probability prob, by a number of rounds drawn uniformly from min … max (min = max: fixed), so mixing uses stale vectors. A delayed message is never lost: push-sum mass in transit is conserved and arrives later; a message that would arrive after the last round of its phase arrives in that last round.",
		func() Failure { return &Delay{Prob: 1, Min: 1, Max: 1} })
}

// Delay delays messages by a random number of rounds.
type Delay struct {
	NoFailure
	Prob float64 `yaml:"prob" doc:"probability that a message is delayed, in [0, 1]"`
	Min  int     `yaml:"min" doc:"shortest delay in rounds, 1 … 1000"`
	Max  int     `yaml:"max" doc:"longest delay in rounds, min … 1000"`
}

// Validate implements Failure.
func (d *Delay) Validate(int) error {
	switch {
	case !(d.Prob >= 0 && d.Prob <= 1):
		return fmt.Errorf("prob must be in [0, 1], got %v", d.Prob)
	case d.Min < 1 || d.Min > MaxDelay:
		return fmt.Errorf("min must be in [1, %d] rounds, got %d", MaxDelay, d.Min)
	case d.Max < d.Min || d.Max > MaxDelay:
		return fmt.Errorf("max must be in [min, %d] = [%d, %d] rounds, got %d", MaxDelay, d.Min, MaxDelay, d.Max)
	}
	return nil
}

// Delay implements Failure.
func (d *Delay) Delay(seed uint64, a, b int, tick uint64) int {
	if a == b || d.Prob == 0 {
		return 0 // what a node keeps for itself is never late
	}
	const purpose = uint64(rng.PurposeEdges)
	if d.Prob < 1 && rng.Uniform(seed, purpose, uint64(a), uint64(b), tick, 0x64656c) >= d.Prob {
		return 0
	}
	span := d.Max - d.Min + 1
	return d.Min + int(rng.Uniform(seed, purpose, uint64(a), uint64(b), tick, 0x6c656e)*float64(span))
}

func (*Delay) delays() {}
