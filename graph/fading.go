package graph

import (
	"fmt"

	"hgpsim/internal/rng"
)

func init() {
	LinkProcesses.Register("fading",
		"Time-varying reliability: every link is up independently each round with probability δ̄·f(t), where f is piecewise linear through the schedule's (round, factor) points (constant before the first and after the last), e.g. [[0, 1], [500, 0.5]] degrades every link to half its δ̄ over 500 rounds. Alg. 2's counts then estimate the time average, not δ̄.",
		func() LinkProcess { return &Fading{Schedule: [][2]float64{{0, 1}}} })
}

// Fading scales every link's probability by a factor that varies over the
// rounds.
type Fading struct {
	Schedule [][2]float64 `yaml:"schedule" doc:"(round, factor) points with increasing rounds ≥ 0 and factors in [0, 1]"`
}

// Validate implements LinkProcess.
func (f *Fading) Validate() error {
	if len(f.Schedule) == 0 {
		return fmt.Errorf("schedule: list at least one (round, factor) point")
	}
	for k, pt := range f.Schedule {
		if !(pt[0] >= 0) || (k > 0 && !(pt[0] > f.Schedule[k-1][0])) {
			return fmt.Errorf("schedule: rounds must increase from 0, got %v", f.Schedule)
		}
		if !(pt[1] >= 0 && pt[1] <= 1) {
			return fmt.Errorf("schedule: factors must be in [0, 1], got %v", pt[1])
		}
	}
	return nil
}

// factor returns f(tick).
func (f *Fading) factor(tick uint64) float64 {
	t := float64(tick)
	s := f.Schedule
	if t <= s[0][0] {
		return s[0][1]
	}
	for k := 1; k < len(s); k++ {
		if t <= s[k][0] {
			w := (t - s[k-1][0]) / (s[k][0] - s[k-1][0])
			return s[k-1][1] + w*(s[k][1]-s[k-1][1])
		}
	}
	return s[len(s)-1][1]
}

// Up implements LinkProcess.
func (f *Fading) Up(seed uint64, a, b int, p float64, tick uint64) bool {
	return rng.Uniform(seed, uint64(rng.PurposeEdges), uint64(a), uint64(b), tick) < p*f.factor(tick)
}
