package optim

import (
	"hgpsim/internal/registry"
)

// Fault is a client behaviour a scenario assigns to chosen clients
// (`faults:`): it wraps whatever behaviour the client runs in each phase,
// seeing only the Round, the Outbox and the typed payloads — never the
// algorithm's private layout — so one fault works with every algorithm.
type Fault interface {
	// Validate checks the parameters.
	Validate() error
	// Wrap returns b with the fault applied, for client self in the phase
	// p. It is called once per phase; b may be nil (a phase without
	// rounds), and then Wrap returns nil.
	Wrap(b Behaviour, self int, p *PhaseSpec) Behaviour
}

// Faults holds the client behaviours of `faults:`.
var Faults = registry.New[Fault]("faults", "kind")

// WithFaults returns c with the faults applied, in order, to the behaviour
// of every phase.
func WithFaults(c Client, self int, faults []Fault) Client {
	if len(faults) == 0 {
		return c
	}
	return &faulted{Client: c, self: self, faults: faults}
}

type faulted struct {
	Client
	self   int
	faults []Fault
}

func (f *faulted) Enter(p *PhaseSpec) (Behaviour, error) {
	b, err := f.Client.Enter(p)
	if err != nil || b == nil {
		return b, err
	}
	for _, fault := range f.faults {
		b = fault.Wrap(b, f.self, p)
	}
	return b, nil
}

// Wrapped is the base of fault wrappers: it forwards Observe and Result to
// the wrapped behaviour, so evaluation and reports see through the fault.
type Wrapped struct{ Inner Behaviour }

// Observe implements Observer.
func (w Wrapped) Observe() Stats {
	if o, ok := w.Inner.(Observer); ok {
		return o.Observe()
	}
	return Stats{}
}

// Result implements Resulter.
func (w Wrapped) Result() Result {
	if r, ok := w.Inner.(Resulter); ok {
		return r.Result()
	}
	return Result{}
}
