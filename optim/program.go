package optim

import (
	"context"
	"fmt"
)

// PhaseSpec is one phase of a run as a Program schedules it: plain data,
// so that a driver can send it to clients in other processes.
type PhaseSpec struct {
	Name      string `wire:"1"`
	Rounds    int    `wire:"2"` // communication rounds; 0 for a phase that only acts on Enter
	EvalEvery int    `wire:"3"` // evaluate every EvalEvery rounds (0: only after the last round)
	Step      int    `wire:"4"` // the outer step the phase belongs to (for reports and errors)
	// Tick, when >= 0, is the edge-realization tick of the phase's first
	// round: phases that start at the same tick see the same links (common
	// random numbers). Negative: continue from the previous phase.
	Tick int64 `wire:"5,zigzag"`
	// Args are the phase's arguments, the algorithm's own type encoded by
	// PutArgs and read by ArgsOf (e.g. whether an SGP phase starts warm).
	Args []byte `wire:"13"`
	// PerClient, when not nil, holds each client's own arguments, indexed
	// by client, encoded like Args (EncodeArgs, DecodeArgs).
	PerClient [][]byte `wire:"14"`
	// States holds each client's saved state, indexed by client
	// (PhaseLoadState only).
	States [][]byte `wire:"9"`
	// Track asks the driver to record what the network delivers
	// (PhaseReport.Delivered), which costs O(n²) memory.
	Track bool `wire:"8"`
	// Offset and Continued cut one phase into parts, so that a run can be
	// checkpointed between them without changing a bit. A part numbers
	// its rounds from Offset: behaviours, messages and reports see round
	// Offset + r. A part with Continued is followed by the next part (the
	// same Name and Offset + Rounds), to which the network's late
	// messages carry over; the phase's last round is the last round of
	// the part without Continued. Cut at evaluated rounds (see
	// SplitPhase), parts evaluate exactly where the whole phase does.
	Offset    int  `wire:"10"`
	Continued bool `wire:"11"`
	// Total is the rounds of the whole phase, for reports (0: Offset +
	// Rounds).
	Total int `wire:"12"`
	// Late, for a part resumed from a checkpoint, holds the late messages
	// the previous part left (PhaseReport.Late). It stays in the driver
	// that routes; worker processes never see it.
	Late []LateMessage `wire:"-"`
	// Delivered, for a Track part after the first, is the record of the
	// parts before it, which this part continues: the whole phase's sums
	// are added in one order however it is cut. Nil starts a new record.
	Delivered *DeliveryRecord `wire:"-"`
}

// Continue is the Tick of a phase that continues the tick sequence.
const Continue = -1

// ShouldEval reports whether round r (0-based, of this part) closes with
// an evaluation.
func (p *PhaseSpec) ShouldEval(r int) bool {
	if r == p.Rounds-1 {
		return true
	}
	return p.EvalEvery > 0 && (p.Offset+r+1)%p.EvalEvery == 0
}

// LastRound reports whether round r (0-based, of this part) is the last
// of the whole phase.
func (p *PhaseSpec) LastRound(r int) bool { return r == p.Rounds-1 && !p.Continued }

// TotalRounds returns the rounds of the whole phase.
func (p *PhaseSpec) TotalRounds() int {
	if p.Total > 0 {
		return p.Total
	}
	return p.Offset + p.Rounds
}

// SplitPhase cuts p into parts of whole multiples of its evaluation
// period, each at least minRounds long (the last part may be shorter):
// between two parts a run may be checkpointed, and the parts give the
// same results as p. A phase that evaluates only at its end is not cut.
func SplitPhase(p PhaseSpec, minRounds int) []PhaseSpec {
	if p.EvalEvery <= 0 || p.EvalEvery >= p.Rounds || p.Offset != 0 || p.Continued {
		return []PhaseSpec{p}
	}
	size := p.EvalEvery * max(1, (minRounds+p.EvalEvery-1)/p.EvalEvery)
	var parts []PhaseSpec
	for off := 0; off < p.Rounds; off += size {
		q := p
		q.Offset, q.Rounds, q.Total = off, min(size, p.Rounds-off), p.Rounds
		q.Continued = off+size < p.Rounds
		if off > 0 {
			q.Tick = Continue
		}
		parts = append(parts, q)
	}
	return parts
}

// Client is one node's state for the whole run. Enter switches it to a
// phase and returns the behaviour that runs the phase's rounds (nil for a
// phase without rounds); what the client learns in one phase (its model,
// its Alg. 2 counts, its λ) stays with it for the next. Everything a client
// needs to act comes from its own state and the PhaseSpec: no phase reaches
// into a client from outside.
type Client interface {
	Enter(p *PhaseSpec) (Behaviour, error)
}

// ClientFactory builds client i of a run. Drivers call it where the client
// lives: the actor runtime inside the client's actor.
type ClientFactory func(i int) (Client, error)

// RoundEvent is what a driver reports at an evaluated round.
type RoundEvent struct {
	Phase   string
	Step    int     // the phase's outer step
	Round   int     // 0-based round within the phase
	Rounds  int     // rounds of the phase
	Traffic Traffic // since the previous event of the same phase
	Clients []Stats // indexed by client; zero entries for non-observers
	// Consensus, when set, is the consensus distance of Clients computed
	// where the parameter vectors live: a driver over worker processes
	// sends the supervisor Stats without X, whose size would grow with the
	// model's.
	Consensus *ConsensusDistance
}

// Summarize aggregates the event's Clients (Summarize), taking the
// consensus distance from Consensus when it is set.
func (ev *RoundEvent) Summarize() Aggregate { return summarize(ev.Clients, ev.Consensus) }

// PhaseReport is what a driver reports when a phase ends.
type PhaseReport struct {
	Spec    *PhaseSpec
	Traffic Traffic
	// Last holds the stats of the phase's last evaluated round (nil when
	// the phase evaluates nothing).
	Last []Stats
	// LastConsensus is Last's consensus distance when the driver computed
	// it where the parameter vectors live (see RoundEvent.Consensus).
	LastConsensus *ConsensusDistance
	// Results holds each client's Result (zero for behaviours that report
	// none).
	Results []Result
	// Delivered is set when Spec.Track asked for it.
	Delivered *DeliveryRecord
	// Late holds the late messages a Continued part leaves to the next
	// part (a checkpoint between them saves them).
	Late []LateMessage
}

// SummarizeLast aggregates Last as RoundEvent.Summarize does.
func (rep *PhaseReport) SummarizeLast() Aggregate { return summarize(rep.Last, rep.LastConsensus) }

// Program schedules the phases of a run: Alg. 1 of PDBO, the round loops
// of the federated methods, an experiment. It is a pure state machine,
// like a behaviour, run by a driver's supervisor: Next gets the report of
// the phase that just ended (nil before the first) and returns the next
// phase, or nil when the run is over.
type Program interface {
	Next(done *PhaseReport) (*PhaseSpec, error)
}

// Sink receives a run's reports in order. Evaluated gets every evaluated
// round (the Clients slice and the X vectors in it are valid only during
// the call), Finished every phase's report. An error stops the run.
type Sink interface {
	Evaluated(ev *RoundEvent) error
	Finished(rep *PhaseReport) error
}

// Driver runs a Program over clients. Implementations keep a communication
// tick that continues across phases (unless a phase sets its own), so that
// every round of a run sees a fresh edge realization.
type Driver interface {
	Execute(ctx context.Context, prog Program, sink Sink) (Traffic, error)
}

// Programs that need nothing at the end of a phase can embed NoSink's
// methods in a Sink; it is also the Sink of a run nobody watches.
type NoSink struct{}

// Evaluated implements Sink.
func (NoSink) Evaluated(*RoundEvent) error { return nil }

// Finished implements Sink.
func (NoSink) Finished(*PhaseReport) error { return nil }

// Phases is a Program that runs fixed phases in order.
type Phases []PhaseSpec

// Horizon is a Program that knows the communication rounds its schedule
// spans (the tick after its last round) when nothing stops it early: a
// run on a links trace that must not outlive it is checked against it
// before it starts.
type Horizon interface {
	Horizon() uint64
}

// HorizonOf returns the tick after the last round of phases run in order
// from tick 0.
func HorizonOf(phases []PhaseSpec) uint64 {
	var tick, end uint64
	for _, p := range phases {
		if p.Tick >= 0 {
			tick = uint64(p.Tick)
		}
		tick += uint64(p.Rounds)
		end = max(end, tick)
	}
	return end
}

// Horizon implements Horizon.
func (ps *Phases) Horizon() uint64 { return HorizonOf(*ps) }

// Next implements Program.
func (ps *Phases) Next(done *PhaseReport) (*PhaseSpec, error) {
	if len(*ps) == 0 {
		return nil, nil
	}
	p := (*ps)[0]
	*ps = (*ps)[1:]
	return &p, nil
}

// SaveState implements Stateful: the number of phases left.
func (ps *Phases) SaveState() ([]byte, error) { return EncodeState(len(*ps)) }

// LoadState implements Stateful on Phases built as the saved ones were.
func (ps *Phases) LoadState(b []byte) error {
	var left int
	if err := DecodeState(b, &left); err != nil {
		return err
	}
	if left < 0 || left > len(*ps) {
		return fmt.Errorf("%d phases left of %d", left, len(*ps))
	}
	*ps = (*ps)[len(*ps)-left:]
	return nil
}

// Fixed is a Client that runs the same behaviour in every phase: for tests,
// benchmarks and experiments that drive behaviours directly. Its Behaviour
// may be replaced between runs.
type Fixed struct{ Behaviour }

// Enter implements Client.
func (f *Fixed) Enter(*PhaseSpec) (Behaviour, error) { return f.Behaviour, nil }

func (f *Fixed) held() Behaviour { return f.Behaviour }

// FixedClients returns a factory of Fixed clients, one per behaviour, and
// the clients (to swap behaviours between runs).
func FixedClients(bs []Behaviour) (ClientFactory, []*Fixed) {
	cs := make([]*Fixed, len(bs))
	for i, b := range bs {
		cs[i] = &Fixed{b}
	}
	return func(i int) (Client, error) { return cs[i], nil }, cs
}

// SinkFunc adapts a function of evaluated rounds to a Sink.
type SinkFunc func(*RoundEvent) error

// Evaluated implements Sink.
func (f SinkFunc) Evaluated(ev *RoundEvent) error { return f(ev) }

// Finished implements Sink.
func (SinkFunc) Finished(*PhaseReport) error { return nil }
