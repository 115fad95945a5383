package optim

import (
	"bytes"
	"encoding/gob"
	"fmt"
)

// Stateful is implemented by the parts of a run whose state outlives a
// phase — clients and programs — so that a run can be checkpointed between
// phases and resumed bit-identically: SaveState encodes everything that
// decides the part's future outputs (its vectors, optimizer moments, the
// positions of its random streams, its counters), and LoadState, called on
// a part freshly built from the same scenario, puts it back. What the part
// rebuilds identically by itself (its data, its model's caches, streams
// re-created at each phase) need not be saved. The encoding is private to
// the type; EncodeState and DecodeState are a convenient one.
type Stateful interface {
	SaveState() ([]byte, error)
	LoadState(b []byte) error
}

// The phases a checkpointing program (Checkpoints) runs between the
// phases of the program it wraps. Neither has rounds; clients enter them
// through the Resumable wrapper, never through their own Enter.
const (
	// PhaseSaveState asks every client for its state (Result.State).
	PhaseSaveState = "save-state"
	// PhaseLoadState gives every client the state it saved
	// (PhaseSpec.States).
	PhaseLoadState = "load-state"
)

// EncodeState encodes v (a struct of exported fields) with encoding/gob,
// which keeps every float64 bit for bit, NaN payloads included.
func EncodeState(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("encoding state: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeState decodes what EncodeState encoded into v (a pointer).
func DecodeState(b []byte, v any) error {
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("decoding state: %w", err)
	}
	return nil
}

// Resumable returns c able to enter the checkpoint phases: on
// PhaseSaveState it reports state's SaveState in its Result, on
// PhaseLoadState it calls state's LoadState with its entry of the phase's
// States; every other phase goes to c. state is the algorithm's own client
// (c may wrap it, e.g. with faults, which keep nothing across phases). A
// client whose state is not Stateful reports Result.Stateless instead, and
// the checkpointing program stops taking checkpoints.
func Resumable(c Client, state Client, self int) Client {
	return &resumable{Client: c, state: state, self: self}
}

type resumable struct {
	Client
	state Client
	self  int
}

func (r *resumable) Enter(p *PhaseSpec) (Behaviour, error) {
	switch p.Name {
	case PhaseSaveState:
		s, ok := statefulOf(r.state)
		if !ok {
			return stateReport{Result{Stateless: fmt.Sprintf("%T", r.state)}}, nil
		}
		b, err := s.SaveState()
		if err != nil {
			return nil, fmt.Errorf("saving the state: %w", err)
		}
		return stateReport{Result{State: b}}, nil
	case PhaseLoadState:
		s, ok := statefulOf(r.state)
		if !ok {
			return nil, fmt.Errorf("a %T client cannot load a saved state", r.state)
		}
		if r.self >= len(p.States) {
			return nil, fmt.Errorf("the checkpoint holds %d client states, none for client %d", len(p.States), r.self)
		}
		if err := s.LoadState(p.States[r.self]); err != nil {
			return nil, fmt.Errorf("loading the saved state: %w", err)
		}
		return nil, nil
	}
	return r.Client.Enter(p)
}

// holder is a client that runs one behaviour in every phase (Fixed,
// stepClient): its state is the behaviour's.
type holder interface{ held() Behaviour }

// statefulOf returns the Stateful that holds c's state: c, or the
// behaviour a holder runs.
func statefulOf(c Client) (Stateful, bool) {
	if s, ok := c.(Stateful); ok {
		return s, true
	}
	if h, ok := c.(holder); ok {
		s, ok := h.held().(Stateful)
		return s, ok
	}
	return nil, false
}

// stateReport is the behaviour of PhaseSaveState: no rounds, a Result.
type stateReport struct{ r Result }

func (stateReport) Send(*Round, Outbox) error       { return nil }
func (stateReport) Receive(*Round, []Message) error { return nil }
func (s stateReport) Result() Result                { return s.r }

// Checkpoint is the state of a run between two phases: what a resumed run
// needs, besides the scenario, to continue exactly where the run stopped.
type Checkpoint struct {
	// Next is the phase the program scheduled after the checkpoint, with
	// Tick set to the edge-realization tick it starts at.
	Next PhaseSpec
	// Program is the program's SaveState after it scheduled Next.
	Program []byte
	// Clients holds each client's SaveState, indexed by client.
	Clients [][]byte
	// Boundaries counts the outer-step boundaries the run has passed.
	Boundaries int
	// Late holds the messages in flight between two parts of a phase;
	// Next.Late carries them back into the resumed driver's router.
	Late []LateMessage
}

// Checkpoints wraps a Program so that every Every-th boundary — a phase
// whose Step exceeds the Step of the phase before it, or the next part of
// a phase cut by SplitPhase — is preceded
// by a PhaseSaveState phase, whose states, with the program's own, Save
// receives. With Resume set, the run starts by loading the checkpoint's
// client states and continues with its Next phase. The wrapped program
// must be Stateful and its clients built with Resumable; the run's sink
// must be wrapped with Sink, which hides the checkpoint phases.
type Checkpoints struct {
	Program Program
	Every   int // boundaries between checkpoints; < 1 takes none
	// Save stores a checkpoint; its error stops the run.
	Save func(*Checkpoint) error
	// Resume, when not nil, is the checkpoint the run continues from.
	Resume *Checkpoint
	// Skipped, when not empty, says why checkpoints stopped being taken
	// (a client or the program is not Stateful).
	Skipped string

	tick       int64 // tick of the next forwarded phase
	boundaries int
	pending    *PhaseSpec    // the phase to run after the save or load phase
	state      []byte        // the program's state after it scheduled pending
	late       []LateMessage // the messages in flight before pending
	started    bool
}

// Next implements Program.
func (c *Checkpoints) Next(done *PhaseReport) (*PhaseSpec, error) {
	if !c.started {
		c.started = true
		if c.Resume != nil {
			cp := c.Resume
			s, ok := c.Program.(Stateful)
			if !ok {
				return nil, fmt.Errorf("resuming: the program (%T) cannot load a saved state", c.Program)
			}
			if err := s.LoadState(cp.Program); err != nil {
				return nil, fmt.Errorf("resuming: the program: %w", err)
			}
			next := cp.Next
			next.Late = cp.Late
			c.pending, c.tick, c.boundaries = &next, next.Tick, cp.Boundaries
			return &PhaseSpec{Name: PhaseLoadState, Tick: Continue, Step: next.Step, States: cp.Clients}, nil
		}
	}
	if done != nil {
		switch done.Spec.Name {
		case PhaseSaveState:
			if err := c.saved(done); err != nil {
				return nil, err
			}
			return c.forward(c.pending), nil
		case PhaseLoadState:
			// The states are loaded: let them go (a checkpoint may be
			// large). The driver's tick is where the checkpointed run's was.
			if c.Resume != nil {
				c.Resume.Clients, c.Resume.Late = nil, nil
			}
			return c.forward(c.pending), nil
		}
	}
	next, err := c.Program.Next(done)
	if err != nil || next == nil {
		return next, err
	}
	if !boundary(done, next) {
		return c.forward(next), nil
	}
	c.boundaries++
	if c.Every < 1 || c.Skipped != "" || c.boundaries%c.Every != 0 {
		return c.forward(next), nil
	}
	s, ok := c.Program.(Stateful)
	if !ok {
		c.Skipped = fmt.Sprintf("the program (%T) cannot save its state", c.Program)
		return c.forward(next), nil
	}
	if c.state, err = s.SaveState(); err != nil {
		return nil, fmt.Errorf("checkpoint: the program: %w", err)
	}
	c.pending, c.late = next, done.Late
	return &PhaseSpec{Name: PhaseSaveState, Tick: Continue, Step: next.Step}, nil
}

// boundary reports whether a checkpoint may be taken between the phase
// done and the phase next: an outer-step boundary, or the cut between two
// parts of a phase (whose late messages the checkpoint saves).
func boundary(done *PhaseReport, next *PhaseSpec) bool {
	if done == nil {
		return false
	}
	if next.Step > done.Spec.Step {
		return true
	}
	return done.Spec.Continued && next.Name == done.Spec.Name && next.Offset == done.Spec.Offset+done.Spec.Rounds
}

// forward returns p and advances the tick past its rounds, as the drivers
// do (a driver starts at tick 0; a phase continues from the tick its
// predecessor ended at unless it sets its own).
func (c *Checkpoints) forward(p *PhaseSpec) *PhaseSpec {
	if p.Tick >= 0 {
		c.tick = p.Tick
	}
	c.tick += int64(p.Rounds)
	return p
}

// saved turns the report of a save phase into a checkpoint for Save.
func (c *Checkpoints) saved(done *PhaseReport) error {
	cp := &Checkpoint{Next: *c.pending, Program: c.state, Clients: make([][]byte, len(done.Results)), Boundaries: c.boundaries,
		Late: c.late}
	if cp.Next.Tick < 0 {
		cp.Next.Tick = c.tick
	}
	for i, r := range done.Results {
		if r.Stateless != "" {
			c.Skipped = fmt.Sprintf("client %d (%s) cannot save its state", i, r.Stateless)
			return nil
		}
		cp.Clients[i] = r.State
	}
	if err := c.Save(cp); err != nil {
		return fmt.Errorf("checkpoint before outer step %d: %w", cp.Next.Step, err)
	}
	return nil
}

// Sink returns s without the reports of the checkpoint phases, which are
// not part of the run's results.
func (c *Checkpoints) Sink(s Sink) Sink { return checkpointSink{s} }

type checkpointSink struct{ Sink }

func (s checkpointSink) Evaluated(ev *RoundEvent) error {
	if isCheckpointPhase(ev.Phase) {
		return nil
	}
	return s.Sink.Evaluated(ev)
}

func (s checkpointSink) Finished(rep *PhaseReport) error {
	if isCheckpointPhase(rep.Spec.Name) {
		return nil
	}
	return s.Sink.Finished(rep)
}

func isCheckpointPhase(name string) bool { return name == PhaseSaveState || name == PhaseLoadState }
