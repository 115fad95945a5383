package optim

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"hgpsim/graph"
)

// Sequential runs a Program in lock step: in every round each client sends,
// the router delivers in index order, then each client receives. It is the
// reference the actor runtime must match bit for bit, and the compute-only
// yardstick of benchmarks.
//
// With SetParallel(p > 1) the Send, Receive, Observe and Result calls of
// different clients run on p goroutines. A client's calls touch only its own
// state and port (the actor runtime already runs them concurrently), and the
// router still delivers in sender order, so the outputs are bit-identical
// whatever p and the scheduling.
type Sequential struct {
	parallel int
	net      *graph.Network
	clients  []Client
	ports    []*Port
	beh      []Behaviour
	router   *Router
	stats    []Stats
	mixes    [][]Mix[float64]  // this round's Premix of each client
	stage    mixStage[float64] // the blocked mixing's scratch
	mixes32  [][]Mix[float32]  // the same for float32 behaviours
	stage32  mixStage[float32]
	errs     []error // eachClient's per-client errors
	tick     uint64
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
	s := &Sequential{parallel: 1, net: nw, clients: make([]Client, n), ports: make([]*Port, n), beh: make([]Behaviour, n),
		router: NewRouter(nw), stats: make([]Stats, n), mixes: make([][]Mix[float64], n), mixes32: make([][]Mix[float32], n), errs: make([]error, n)}
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

// SetParallel sets how many goroutines run the clients' calls of a round:
// p ≤ 0 means runtime.GOMAXPROCS(0), 1 the single-goroutine reference.
func (s *Sequential) SetParallel(p int) {
	if p <= 0 {
		p = runtime.GOMAXPROCS(0)
	}
	s.parallel = p
}

// eachClient calls f for every client index, on up to s.parallel
// goroutines. The error returned is that of the lowest index that failed, so
// it does not depend on scheduling; a panic in f is that client's error.
func (s *Sequential) eachClient(f func(i int) error) error {
	n := len(s.clients)
	p := min(s.parallel, n)
	if p <= 1 {
		for i := range n {
			s.at.client = i
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := s.errs[:n] // reused: a stage runs several times per round
	clear(errs)
	var next atomic.Int64
	var wg sync.WaitGroup
	call := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				errs[i] = &ClientError{Client: i, Phase: s.at.phase, Round: s.at.round,
					Err: fmt.Errorf("panic in %s: %v\n%s", s.at.call, r, debug.Stack())}
			}
		}()
		errs[i] = f(i)
	}
	wg.Add(p)
	for range p {
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				call(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
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
	err := s.eachClient(func(i int) error {
		b, err := s.clients[i].Enter(spec)
		if err != nil {
			return &ClientError{Client: i, Phase: spec.Name, Round: -1, Err: err}
		}
		s.beh[i] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep := &PhaseReport{Spec: spec}
	// A part of a phase keeps the late messages of the part before it (or
	// of the checkpoint it resumes from); a phase without rounds (a
	// checkpoint's) leaves them alone.
	switch {
	case spec.Late != nil:
		if err := s.router.Restore(spec.Late); err != nil {
			return nil, fmt.Errorf("phase %s: %w", spec.Name, err)
		}
	case spec.Offset == 0 && spec.Rounds > 0:
		s.router.Close(&Traffic{}) // nothing of a failed phase lingers
	}
	if spec.Track {
		rep.Delivered = spec.Delivered
		if rep.Delivered == nil {
			rep.Delivered = NewDeliveryRecord(len(s.clients))
		}
	}
	var since Traffic
	for r := 0; r < spec.Rounds; r++ {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("phase %s, round %d: %w", spec.Name, spec.Offset+r, err)
		}
		s.router.Open(s.tick, spec.LastRound(r), rep.Delivered)
		s.at.round, s.at.call = spec.Offset+r, "Send"
		err := s.eachClient(func(i int) error {
			round := s.ports[i].Open(spec.Name, spec.Offset+r, s.tick)
			round.Lockstep = true
			if b := s.beh[i]; b != nil && !round.Offline {
				if err := b.Send(round, s.ports[i]); err != nil {
					return &ClientError{Client: i, Phase: spec.Name, Round: spec.Offset + r, Err: err}
				}
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		// Delivering in ascending sender order makes every inbox sorted by
		// sender.
		s.at.call = "Deliver"
		for i := range s.beh {
			s.at.client = i
			s.router.Deliver(i, s.ports[i], &since, rep.Delivered)
		}
		// Mixing first, for every receiver at once (see Premixer).
		s.at.call = "Premix"
		inbox := s.router.Inboxes()
		err = s.eachClient(func(i int) error {
			s.mixes[i], s.mixes32[i] = nil, nil
			if s.ports[i].Round().Offline {
				return nil
			}
			switch p := s.beh[i].(type) {
			case Premixer[float64]:
				s.mixes[i] = p.Premix(s.ports[i].Round(), inbox[i])
			case Premixer[float32]:
				s.mixes32[i] = p.Premix(s.ports[i].Round(), inbox[i])
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		s.at.call, s.at.client = "mix", -1
		applyMixesBlocked(&s.stage, s.mixes, s.parallel)
		applyMixesBlocked(&s.stage32, s.mixes32, s.parallel)
		s.at.call = "Receive"
		err = s.eachClient(func(i int) error {
			b := s.beh[i]
			if b == nil || s.ports[i].Round().Offline {
				return nil
			}
			receive := b.Receive
			switch p := b.(type) {
			case Premixer[float64]:
				receive = p.ReceiveMixed
			case Premixer[float32]:
				receive = p.ReceiveMixed
			}
			if err := receive(s.ports[i].Round(), inbox[i]); err != nil {
				return &ClientError{Client: i, Phase: spec.Name, Round: spec.Offset + r, Err: err}
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		s.tick++
		if rep.Delivered != nil {
			rep.Delivered.Rounds++
		}
		if spec.ShouldEval(r) {
			rep.Traffic.Add(since)
			s.at.call = "Observe"
			_ = s.eachClient(func(i int) error { // Observe cannot fail
				s.stats[i] = Stats{}
				if o, ok := s.beh[i].(Observer); ok {
					s.stats[i] = o.Observe()
				}
				return nil
			})
			rep.Last = s.stats
			s.at.call, s.at.client = "sink", -1
			if err := sink.Evaluated(&RoundEvent{Phase: spec.Name, Step: spec.Step, Round: spec.Offset + r, Rounds: spec.TotalRounds(), Traffic: since, Clients: s.stats}); err != nil {
				return rep, err
			}
			since = Traffic{}
		}
	}
	switch {
	case spec.Continued:
		rep.Late = s.router.Late()
	case spec.Rounds > 0:
		s.router.Close(&since)
	}
	rep.Traffic.Add(since)
	rep.Results = make([]Result, len(s.beh))
	s.at.call = "Result"
	err = s.eachClient(func(i int) error {
		if r, ok := s.beh[i].(Resulter); ok {
			rep.Results[i] = r.Result()
		}
		return nil
	})
	return rep, err
}
