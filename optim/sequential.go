package optim

import (
	"context"
	"fmt"

	"hgpsim/graph"
)

// Sequential runs phases in one goroutine: every client sends in index
// order, then every client receives. It is the reference the actor runtime
// must match bit for bit, and the compute-only yardstick of benchmarks.
type Sequential struct {
	Net  *graph.Network
	tick uint64

	recv    []int
	weights []float64
	inbox   [][]Message
	stats   []Stats
}

// NewSequential returns a driver over nw starting at tick 0.
func NewSequential(nw *graph.Network) *Sequential {
	return &Sequential{Net: nw}
}

// Run implements Driver.
func (s *Sequential) Run(ctx context.Context, p *Phase, sink Sink) (Traffic, error) {
	n := s.Net.N
	if len(p.Clients) != n {
		return Traffic{}, fmt.Errorf("phase %s has %d clients, network has %d", p.Name, len(p.Clients), n)
	}
	if len(s.inbox) != n {
		s.inbox = make([][]Message, n)
		s.weights = make([]float64, n)
		s.recv = make([]int, 0, n)
		s.stats = make([]Stats, n)
	}
	var total, since Traffic
	for r := 0; r < p.Rounds; r++ {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("phase %s, round %d: %w", p.Name, r, err)
		}
		for i := range s.inbox {
			s.inbox[i] = s.inbox[i][:0]
		}
		// Senders in ascending order make every inbox sorted by sender.
		for i, b := range p.Clients {
			s.recv = s.Net.Realize(i, s.tick, s.recv)
			w := s.Net.PushWeights(i, s.recv, s.weights)
			data := b.Send(r, s.recv, w)
			if data == nil {
				continue
			}
			for k, j := range s.recv {
				s.inbox[j] = append(s.inbox[j], Message{From: i, Weight: w[k], Data: data})
			}
			since.Count(i, s.recv, len(data))
		}
		for i, b := range p.Clients {
			if err := b.Receive(r, s.inbox[i]); err != nil {
				return total, &ClientError{Client: i, Phase: p.Name, Round: r, Err: err}
			}
		}
		s.tick++
		if p.ShouldEval(r) {
			total.Add(since)
			if err := s.emit(p, r, since, sink); err != nil {
				return total, err
			}
			since = Traffic{}
		}
	}
	return total, nil
}

func (s *Sequential) emit(p *Phase, r int, tr Traffic, sink Sink) error {
	for i, b := range p.Clients {
		s.stats[i] = Stats{}
		if o, ok := b.(Observer); ok {
			s.stats[i] = o.Observe()
		}
	}
	if sink == nil {
		return nil
	}
	return sink(RoundEvent{Phase: p.Name, Round: r, Traffic: tr, Clients: s.stats})
}
