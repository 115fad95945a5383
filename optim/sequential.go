package optim

import (
	"context"
	"fmt"
	"runtime/debug"

	"hgpsim/graph"
)

// Sequential runs a Program in one goroutine: in every round each client
// sends in index order, then each client receives. It is the reference the
// actor runtime must match bit for bit, and the compute-only yardstick of
// benchmarks.
type Sequential struct {
	net     *graph.Network
	clients []Client
	ports   []*Port
	beh     []Behaviour
	router  *Router
	stats   []Stats
	tick    uint64
	// at says where the driver is, for the error of a recovered panic.
	at struct {
		client, round int
		phase, call   string
	}
}

// NewSequential builds the n clients of nw with factory and returns a
// driver starting at tick 0.
func NewSequential(nw *graph.Network, factory ClientFactory) (*Sequential, error) {
	n := nw.N
	s := &Sequential{net: nw, clients: make([]Client, n), ports: make([]*Port, n), beh: make([]Behaviour, n),
		router: NewRouter(nw), stats: make([]Stats, n)}
	for i := range n {
		c, err := factory(i)
		if err != nil {
			return nil, fmt.Errorf("building client %d: %w", i, err)
		}
		s.clients[i] = c
		s.ports[i] = NewPort(nw, i)
	}
	return s, nil
}

// Tick returns the edge-realization tick of the next round.
func (s *Sequential) Tick() uint64 { return s.tick }

// Execute implements Driver. A panic in a behaviour, the program or the
// sink fails the run with an error saying where, as in the actor runtime.
func (s *Sequential) Execute(ctx context.Context, prog Program, sink Sink) (total Traffic, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.panicked(r)
		}
	}()
	var done *PhaseReport
	for {
		s.at.call, s.at.client = "program", -1
		spec, err := prog.Next(done)
		if err != nil {
			return total, err
		}
		if spec == nil {
			return total, nil
		}
		rep, err := s.phase(ctx, spec, sink)
		if rep != nil {
			total.Add(rep.Traffic)
		}
		if err != nil {
			return total, err
		}
		s.at.call, s.at.client = "sink", -1
		if err := sink.Finished(rep); err != nil {
			return total, err
		}
		done = rep
	}
}

// panicked turns a recovered panic into an error naming where it happened.
func (s *Sequential) panicked(r any) error {
	err := fmt.Errorf("panic in %s: %v\n%s", s.at.call, r, debug.Stack())
	if s.at.client >= 0 {
		return &ClientError{Client: s.at.client, Phase: s.at.phase, Round: s.at.round, Err: err}
	}
	return fmt.Errorf("sequential driver, phase %s, round %d: %w", s.at.phase, s.at.round, err)
}

func (s *Sequential) phase(ctx context.Context, spec *PhaseSpec, sink Sink) (*PhaseReport, error) {
	if spec.Tick >= 0 {
		s.tick = uint64(spec.Tick)
	}
	s.at.phase, s.at.round, s.at.call = spec.Name, -1, "Enter"
	for i, c := range s.clients {
		s.at.client = i
		b, err := c.Enter(spec)
		if err != nil {
			return nil, &ClientError{Client: i, Phase: spec.Name, Round: -1, Err: err}
		}
		s.beh[i] = b
	}
	rep := &PhaseReport{Spec: spec}
	s.router.Close(&Traffic{}) // nothing of a failed phase lingers
	if spec.Track {
		rep.Delivered = NewDeliveryRecord(len(s.clients))
	}
	var since Traffic
	for r := 0; r < spec.Rounds; r++ {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("phase %s, round %d: %w", spec.Name, r, err)
		}
		s.router.Open(s.tick, r == spec.Rounds-1, rep.Delivered)
		// Senders in ascending order make every inbox sorted by sender.
		s.at.round, s.at.call = r, "Send"
		for i, b := range s.beh {
			s.at.client = i
			round := s.ports[i].Open(spec.Name, r, s.tick)
			if b != nil && !round.Offline {
				if err := b.Send(round, s.ports[i]); err != nil {
					return rep, &ClientError{Client: i, Phase: spec.Name, Round: r, Err: err}
				}
			}
			s.router.Deliver(i, s.ports[i], &since, rep.Delivered)
		}
		s.at.call = "Receive"
		inbox := s.router.Inboxes()
		for i, b := range s.beh {
			if b == nil || s.ports[i].Round().Offline {
				continue
			}
			s.at.client = i
			if err := b.Receive(s.ports[i].Round(), inbox[i]); err != nil {
				return rep, &ClientError{Client: i, Phase: spec.Name, Round: r, Err: err}
			}
		}
		s.tick++
		if rep.Delivered != nil {
			rep.Delivered.Rounds++
		}
		if spec.ShouldEval(r) {
			rep.Traffic.Add(since)
			s.at.call = "Observe"
			for i, b := range s.beh {
				s.at.client = i
				s.stats[i] = Stats{}
				if o, ok := b.(Observer); ok {
					s.stats[i] = o.Observe()
				}
			}
			rep.Last = s.stats
			s.at.call, s.at.client = "sink", -1
			if err := sink.Evaluated(&RoundEvent{Phase: spec.Name, Step: spec.Step, Round: r, Rounds: spec.Rounds, Traffic: since, Clients: s.stats}); err != nil {
				return rep, err
			}
			since = Traffic{}
		}
	}
	s.router.Close(&since)
	rep.Traffic.Add(since)
	rep.Results = make([]Result, len(s.beh))
	s.at.call = "Result"
	for i, b := range s.beh {
		s.at.client = i
		if r, ok := b.(Resulter); ok {
			rep.Results[i] = r.Result()
		}
	}
	return rep, nil
}
