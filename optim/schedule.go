package optim

import (
	"fmt"
	"math"
	"sort"
)

// Schedule is a learning-rate schedule α_t over the rounds of a phase.
type Schedule struct {
	Kind       string  // "constant", "multistep" or "inverse"
	Base       float64 // α_0 > 0
	Milestones []int   // multistep: rounds at which α is multiplied by Gamma
	Gamma      float64 // multistep factor in (0, 1]
	Decay      float64 // inverse: α_t = Base / (1 + Decay·t)^Power
	Power      float64 // inverse: exponent in (0, 1]
}

// Validate reports a schedule a user could have written wrongly.
func (s Schedule) Validate() error {
	if !(s.Base > 0) || math.IsInf(s.Base, 0) {
		return fmt.Errorf("learning rate must be a finite number > 0, got %v", s.Base)
	}
	switch s.Kind {
	case "constant":
	case "multistep":
		if !(s.Gamma > 0 && s.Gamma <= 1) {
			return fmt.Errorf("multistep gamma must be in (0, 1], got %v", s.Gamma)
		}
		if !sort.IntsAreSorted(s.Milestones) {
			return fmt.Errorf("multistep milestones must be increasing, got %v", s.Milestones)
		}
		for _, m := range s.Milestones {
			if m <= 0 {
				return fmt.Errorf("multistep milestones must be > 0, got %v", s.Milestones)
			}
		}
	case "inverse":
		if !(s.Decay > 0) {
			return fmt.Errorf("inverse decay must be > 0, got %v", s.Decay)
		}
		if !(s.Power > 0 && s.Power <= 1) {
			return fmt.Errorf("inverse power must be in (0, 1], got %v", s.Power)
		}
	default:
		return fmt.Errorf("unknown schedule %q (allowed: constant, multistep, inverse)", s.Kind)
	}
	return nil
}

// At returns α_t for round t ≥ 0.
func (s Schedule) At(t int) float64 {
	switch s.Kind {
	case "multistep":
		a := s.Base
		for _, m := range s.Milestones {
			if t >= m {
				a *= s.Gamma
			}
		}
		return a
	case "inverse":
		return s.Base / math.Pow(1+s.Decay*float64(t), s.Power)
	default:
		return s.Base
	}
}
