package actors

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/optim"
)

// supervisor spawns the clients and drives the steps of each phase.
type supervisor struct {
	n       int
	router  *router
	pool    *workers
	timeout time.Duration
	ready   chan<- []*actor.PID

	run         *runPhase
	epoch       uint64 // phases started so far
	step        int
	acked       int
	waiting     []bool
	stats       []optim.Stats
	posts       []post            // of the round being opened, by sender
	in          [][]optim.Message // delivered posts of the round just closed
	stepTraffic optim.Traffic     // of the step being acknowledged
	since       optim.Traffic     // since the last event
	total       optim.Traffic
	failure     error
}

func (s *supervisor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.spawnClients(ctx)
	case *runPhase:
		s.start(ctx, m)
	case *ack:
		s.onAck(ctx, m)
	case *clientFailed:
		s.fail(ctx, &optim.ClientError{Client: m.client, Phase: s.phaseName(), Round: s.step - 1,
			Err: fmt.Errorf("client actor crashed: %v", m.reason)})
	case *abort:
		s.fail(ctx, m.err)
	case *actor.ReceiveTimeout:
		if s.run != nil {
			s.fail(ctx, fmt.Errorf("phase %s, round %d: no progress for %v; clients not answering: %v",
				s.run.phase.Name, s.step, s.timeout, s.missing()))
		}
	}
}

func (s *supervisor) spawnClients(ctx actor.Context) {
	pids := make([]*actor.PID, s.n)
	for i := range pids {
		c := &client{id: i, router: s.router, supervisor: ctx.Self(),
			outbox: post{recv: make([]int, 0, s.n), weights: make([]float64, s.n)}}
		pids[i] = ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return c }, actor.WithDispatcher(s.pool)))
	}
	s.router.pids = pids
	s.waiting = make([]bool, s.n)
	s.stats = make([]optim.Stats, s.n)
	s.posts = make([]post, s.n)
	s.ready <- pids
}

func (s *supervisor) phaseName() string {
	if s.run == nil {
		return "-"
	}
	return s.run.phase.Name
}

func (s *supervisor) start(ctx actor.Context, m *runPhase) {
	if s.run != nil {
		m.done <- phaseResult{err: errors.New("actors: a phase is already running")}
		return
	}
	if len(m.phase.Clients) != s.n {
		m.done <- phaseResult{err: fmt.Errorf("phase %s has %d clients, runtime has %d", m.phase.Name, len(m.phase.Clients), s.n)}
		return
	}
	s.run, s.step, s.failure = m, 0, nil
	s.epoch++
	s.since, s.total, s.stepTraffic = optim.Traffic{}, optim.Traffic{}, optim.Traffic{}
	for i, pid := range s.router.pids {
		ctx.Send(pid, &enterPhase{name: m.phase.Name, beh: m.phase.Clients[i]})
	}
	if s.timeout > 0 {
		ctx.SetReceiveTimeout(s.timeout)
	}
	s.sendStep(ctx)
}

func (s *supervisor) sendStep(ctx actor.Context) {
	p := s.run.phase
	st := &step{epoch: s.epoch, step: s.step, rounds: p.Rounds, tick: s.run.startTick + uint64(s.step),
		eval: s.step > 0 && p.ShouldEval(s.step-1), in: s.in}
	s.acked = 0
	for i, pid := range s.router.pids {
		s.waiting[i] = true
		ctx.Send(pid, st)
	}
}

func (s *supervisor) onAck(ctx actor.Context, m *ack) {
	if s.run == nil || m.epoch != s.epoch {
		return // a late answer from a failed phase
	}
	if m.err != nil {
		s.fail(ctx, &optim.ClientError{Client: m.client, Phase: s.run.phase.Name, Round: m.round, Err: m.err})
		return
	}
	if m.step != s.step || !s.waiting[m.client] {
		s.fail(ctx, fmt.Errorf("actors: client %d answered step %d during step %d", m.client, m.step, s.step))
		return
	}
	s.waiting[m.client] = false
	s.stats[m.client] = m.stats
	s.posts[m.client] = m.post
	s.stepTraffic.Add(m.traffic) // belongs to round s.step, reported after round s.step-1
	s.acked++
	if s.acked < s.n {
		return
	}
	p := s.run.phase
	if s.step > 0 && p.ShouldEval(s.step-1) {
		s.total.Add(s.since)
		var err error
		if s.run.sink != nil {
			err = s.run.sink(optim.RoundEvent{Phase: p.Name, Round: s.step - 1, Traffic: s.since, Clients: s.stats})
		}
		s.since = optim.Traffic{}
		if err != nil {
			s.fail(ctx, err)
			return
		}
	}
	s.since.Add(s.stepTraffic)
	s.stepTraffic = optim.Traffic{}
	if s.step == p.Rounds {
		s.finish(ctx, nil)
		return
	}
	// Every client has closed round s.step-1 and opened round s.step: deliver
	// the posts of round s.step with the next step.
	s.in = s.router.deliver(s.posts)
	clear(s.posts)
	s.step++
	s.sendStep(ctx)
}

func (s *supervisor) fail(ctx actor.Context, err error) {
	if s.run == nil {
		return
	}
	s.finish(ctx, err)
}

func (s *supervisor) finish(ctx actor.Context, err error) {
	ctx.CancelReceiveTimeout()
	s.total.Add(s.since)
	s.run.done <- phaseResult{traffic: s.total, err: err}
	s.run = nil
	clear(s.stats)
	clear(s.posts)
	s.in = nil
	s.router.forget()
}

func (s *supervisor) missing() []int {
	var out []int
	for i, w := range s.waiting {
		if w {
			out = append(out, i)
		}
	}
	return out
}

// stopAndReport is the strategy for client actors: a crashed client is
// stopped, never restarted (a restart would rebuild it without its state),
// and the supervisor is told which one.
type stopAndReport struct{ clientOf func(*actor.PID) int }

func (st stopAndReport) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason interface{}, _ interface{}) {
	sup.StopChildren(child)
	if self, ok := sup.(actor.Context); ok {
		self.Send(self.Self(), &clientFailed{client: st.clientOf(child), reason: reason})
	}
}
