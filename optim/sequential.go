package optim

import (
	"context"
	"fmt"

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
	inbox   [][]Message
	stats   []Stats
	tick    uint64
}

// NewSequential builds the n clients of nw with factory and returns a
// driver starting at tick 0.
func NewSequential(nw *graph.Network, factory ClientFactory) (*Sequential, error) {
	n := nw.N
	s := &Sequential{net: nw, clients: make([]Client, n), ports: make([]*Port, n), beh: make([]Behaviour, n),
		inbox: make([][]Message, n), stats: make([]Stats, n)}
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

// Execute implements Driver.
func (s *Sequential) Execute(ctx context.Context, prog Program, sink Sink) (Traffic, error) {
	var total Traffic
	var done *PhaseReport
	for {
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
		if err := sink.Finished(rep); err != nil {
			return total, err
		}
		done = rep
	}
}

func (s *Sequential) phase(ctx context.Context, spec *PhaseSpec, sink Sink) (*PhaseReport, error) {
	if spec.Tick >= 0 {
		s.tick = uint64(spec.Tick)
	}
	for i, c := range s.clients {
		b, err := c.Enter(spec)
		if err != nil {
			return nil, &ClientError{Client: i, Phase: spec.Name, Round: -1, Err: err}
		}
		s.beh[i] = b
	}
	rep := &PhaseReport{Spec: spec}
	if spec.Track {
		rep.Delivered = NewDeliveryRecord(len(s.clients))
	}
	var since Traffic
	for r := 0; r < spec.Rounds; r++ {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("phase %s, round %d: %w", spec.Name, r, err)
		}
		for i := range s.inbox {
			s.inbox[i] = s.inbox[i][:0]
		}
		// Senders in ascending order make every inbox sorted by sender.
		for i, b := range s.beh {
			round := s.ports[i].Open(spec.Name, r, s.tick)
			if b != nil {
				if err := b.Send(round, s.ports[i]); err != nil {
					return rep, &ClientError{Client: i, Phase: spec.Name, Round: r, Err: err}
				}
			}
			Deliver(s.inbox, i, s.ports[i], &since, rep.Delivered)
		}
		for i, b := range s.beh {
			if b == nil {
				continue
			}
			if err := b.Receive(s.ports[i].Round(), s.inbox[i]); err != nil {
				return rep, &ClientError{Client: i, Phase: spec.Name, Round: r, Err: err}
			}
		}
		s.tick++
		if rep.Delivered != nil {
			rep.Delivered.Rounds++
		}
		if spec.ShouldEval(r) {
			rep.Traffic.Add(since)
			for i, b := range s.beh {
				s.stats[i] = Stats{}
				if o, ok := b.(Observer); ok {
					s.stats[i] = o.Observe()
				}
			}
			rep.Last = s.stats
			if err := sink.Evaluated(&RoundEvent{Phase: spec.Name, Step: spec.Step, Round: r, Traffic: since, Clients: s.stats}); err != nil {
				return rep, err
			}
			since = Traffic{}
		}
	}
	rep.Traffic.Add(since)
	rep.Results = make([]Result, len(s.beh))
	for i, b := range s.beh {
		if r, ok := b.(Resulter); ok {
			rep.Results[i] = r.Result()
		}
	}
	return rep, nil
}
