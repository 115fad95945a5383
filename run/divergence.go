package run

import (
	"fmt"
	"math"
	"strings"

	"hgpsim/optim"
)

// BlowupGrowth is the growth beyond which a value counts as blown up: a
// client's training loss more than BlowupGrowth times its loss at the
// first evaluation of the same phase (of the same outer step), or a
// hyper-gradient norm more than BlowupGrowth times the run's first one.
// It is scale-free, so it holds for any data and model, where a fixed
// bound on the loss (10) is passed by healthy runs at large step sizes
// and missed by slow blow-ups from a small loss. A value that is not
// finite is a blow-up too.
const BlowupGrowth = 1e3

// Blowup is a phase of a run in which a value blew up (BlowupGrowth).
type Blowup struct {
	Phase string `json:"phase"`
	Step  int    `json:"step"` // outer step
	// Round is the evaluated round (0-based, of the phase) where it was
	// first seen, and Client the client (-1: a value of all clients, the
	// stacked hyper-gradient norm).
	Round  int    `json:"round"`
	Client int    `json:"client"`
	What   string `json:"what"` // train_loss or hypergradient_norm
	// Start is the value it grew from; Largest the largest value in the
	// phase (+Inf: not finite), over any client.
	Start   float64 `json:"start"`
	Largest float64 `json:"largest"`
}

func (b Blowup) String() string {
	who := fmt.Sprintf("client %d", b.Client)
	if b.Client < 0 {
		who = "all clients"
	}
	return fmt.Sprintf("phase %s, outer step %d, round %d, %s: %s grew from %.3g to %.3g", b.Phase, b.Step, b.Round, who, b.What, b.Start, b.Largest)
}

// divergence watches a run's evaluations for blow-ups. It is part of the
// sink's checkpointed state, so a resumed run records what the
// uninterrupted one would.
type divergence struct {
	Blowups []Blowup
	// Phase and Step name the phase instance whose start Losses holds:
	// each client's training loss at its first evaluation (NaN: none).
	Phase  string
	Step   int
	Losses []float64
	// FirstHyper is the run's first hyper-gradient norm (0: none yet).
	FirstHyper float64
}

// blownUp reports whether v grew from start past BlowupGrowth, or is not
// finite.
func blownUp(v, start float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return true
	}
	return start > 0 && v > BlowupGrowth*start
}

// record adds b, or raises the largest value of the phase's record of the
// same quantity.
func (d *divergence) record(b Blowup) {
	for k := range d.Blowups {
		o := &d.Blowups[k]
		if o.Phase == b.Phase && o.Step == b.Step && o.What == b.What {
			if b.Largest > o.Largest || math.IsNaN(b.Largest) {
				o.Largest = b.Largest
			}
			return
		}
	}
	d.Blowups = append(d.Blowups, b)
}

// evaluated checks the training losses of an evaluated round.
func (d *divergence) evaluated(ev *optim.RoundEvent) {
	if ev.Phase != d.Phase || ev.Step != d.Step || len(d.Losses) != len(ev.Clients) {
		d.Phase, d.Step = ev.Phase, ev.Step
		d.Losses = make([]float64, len(ev.Clients))
		for i, s := range ev.Clients {
			d.Losses[i] = math.NaN()
			if s.TrainN > 0 {
				d.Losses[i] = s.TrainLoss
			}
		}
		return
	}
	for i, s := range ev.Clients {
		if s.TrainN == 0 {
			continue
		}
		if math.IsNaN(d.Losses[i]) {
			d.Losses[i] = s.TrainLoss // its first evaluation in the phase
			continue
		}
		if blownUp(s.TrainLoss, d.Losses[i]) {
			largest := s.TrainLoss
			if math.IsNaN(largest) {
				largest = math.Inf(1)
			}
			d.record(Blowup{Phase: ev.Phase, Step: ev.Step, Round: ev.Round, Client: i, What: "train_loss", Start: d.Losses[i], Largest: largest})
		}
	}
}

// hypergradient checks a hyper-gradient phase's stacked norm against the
// run's first.
func (d *divergence) hypergradient(step, rounds int, norm float64) {
	if d.FirstHyper == 0 && !math.IsNaN(norm) && !math.IsInf(norm, 0) {
		d.FirstHyper = norm
		return
	}
	if blownUp(norm, d.FirstHyper) {
		if math.IsNaN(norm) {
			norm = math.Inf(1)
		}
		d.record(Blowup{Phase: "hypergradient", Step: step, Round: rounds - 1, Client: -1, What: "hypergradient_norm", Start: d.FirstHyper, Largest: norm})
	}
}

// blownUpStep reports whether the SGP phase of outer step s blew up.
func (d *divergence) blownUpStep(s int) bool {
	for _, b := range d.Blowups {
		if b.Phase == "sgp" && b.Step == s {
			return true
		}
	}
	return false
}

// warning says which phases blew up, for the end of a run ("" for none).
func (d *divergence) warning() string {
	if len(d.Blowups) == 0 {
		return ""
	}
	const most = 5
	var lines []string
	for k, b := range d.Blowups {
		if k == most {
			lines = append(lines, fmt.Sprintf("and %d more (summary.json: blowups)", len(d.Blowups)-most))
			break
		}
		lines = append(lines, b.String())
	}
	return fmt.Sprintf("the run diverged in %d phase(s) (a value grew more than %g-fold over its start, or was not finite): %s",
		len(d.Blowups), BlowupGrowth, strings.Join(lines, "; "))
}
