package faults

import (
	"hgpsim/internal/registry"
	"hgpsim/optim"
)

// Fault is a client behaviour a scenario assigns to chosen clients
// (`faults:`): it wraps whatever behaviour the client runs in each phase,
// seeing only the Round, the Outbox and the typed payloads — never the
// algorithm's private layout — so one fault works with every algorithm.
type Fault interface {
	// Validate checks the parameters.
	Validate() error
	// Wrap returns b with the fault applied, for the client env.Self in
	// the phase env.Phase. It is called once per phase part (a phase cut
	// at its evaluations so that it can be checkpointed is entered at
	// every part) and nothing the wrapper holds is checkpointed, so a
	// wrapper keeps no state across rounds: it derives what it does from
	// the round (Round.Index counts the whole phase) and counter-based
	// draws. b may be nil (a phase without rounds), and then Wrap returns
	// nil.
	Wrap(b optim.Behaviour, env optim.Env) optim.Behaviour
}

// Faults holds the client behaviours of `faults:`.
var Faults = registry.New[Fault]("faults", "kind")

// WithFaults returns c with the faults applied, in order, to the behaviour
// of every phase; env names the client (its Phase is set per phase).
func WithFaults(c optim.Client, env optim.Env, faults []Fault) optim.Client {
	if len(faults) == 0 {
		return c
	}
	return &faulted{Client: c, env: env, faults: faults}
}

type faulted struct {
	optim.Client
	env    optim.Env
	faults []Fault
}

func (f *faulted) Enter(p *optim.PhaseSpec) (optim.Behaviour, error) {
	b, err := f.Client.Enter(p)
	if err != nil || b == nil {
		return b, err
	}
	env := f.env
	env.Phase = p
	for _, fault := range f.faults {
		b = fault.Wrap(b, env)
	}
	return b, nil
}
