package actors

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
	"hgpsim/wire"
)

// supervisor spawns the clients and runs a Program: it asks the program
// for each phase, drives the phase's rounds in steps, routes what the
// clients send (the router is a component of the supervisor), and reports
// to the sink.
type supervisor struct {
	n       int
	net     *graph.Network
	factory optim.ClientFactory
	pool    *workers
	timeout time.Duration
	watch   *watchdog
	ready   chan<- error
	remote  *remoteRun // nil when every client is in this process
	groups  int        // in-process actors hosting the clients

	pids     []*actor.PID // by client: its actor (in one process, its group's)
	hosts    []*actor.PID // in one process: the group actors, in client order
	built    int
	buildErr error

	run      *runProgram
	tick     uint64
	spec     *optim.PhaseSpec
	rep      *optim.PhaseReport
	epoch    uint64 // phases started so far
	step     int
	acked    int
	waiting  []bool
	stats    []optim.Stats
	ports    []*optim.Port // of the round being opened, by sender
	router   *optim.Router
	since    optim.Traffic // since the last event
	stepSent optim.Traffic // of the step being acknowledged
	total    optim.Traffic
}

func (s *supervisor) Receive(ctx actor.Context) {
	// A panic here (in the sink, the program or the router) fails the run
	// with an error naming where, instead of leaving the caller waiting
	// for an answer that never comes.
	defer func() {
		if r := recover(); r != nil {
			s.fail(ctx, fmt.Errorf("supervisor: panic while handling %T: %v\n%s", ctx.Message(), r, debug.Stack()))
		}
	}()
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.spawnClients(ctx)
	case *built:
		s.onBuilt(m)
	case *runProgram:
		s.start(ctx, m)
	case *groupAck:
		s.onGroupAck(ctx, m)
	case *clientFailed:
		what := "client actor"
		if last := s.sameActor(m.client); last > m.client {
			what = fmt.Sprintf("actor of clients %d–%d", m.client, last)
		}
		s.fail(ctx, &optim.ClientError{Client: m.client, Phase: s.phaseName(), Round: s.roundClosing(),
			Err: fmt.Errorf("%s crashed: %v", what, m.reason)})
	case *abort:
		s.fail(ctx, m.err)
	case *wire.WorkerAck:
		s.onWorkerAck(ctx, m)
	case *wire.Hosted:
		s.onHosted(ctx, m)
	case *wire.Heartbeat:
		s.onHeartbeat(m)
	case *actor.Terminated:
		s.onTerminated(ctx, m)
	case *checkWorkers:
		s.checkLiveness(ctx)

	case *actor.ReceiveTimeout:
		if s.run == nil {
			return
		}
		if err := s.watch.stalled(s.timeout); err != nil {
			s.fail(ctx, fmt.Errorf("phase %s, round %d: %w; clients not answering: %v",
				s.phaseName(), s.roundClosing()+1, err, s.missing()))
			return
		}
		ctx.SetReceiveTimeout(s.timeout) // the timer stops when it fires
	}
	s.watch.touch()
}

func (s *supervisor) spawnClients(ctx actor.Context) {
	s.pids = make([]*actor.PID, s.n)
	if s.remote != nil {
		s.setupRemote(ctx)
	} else {
		g := max(1, min(s.groups, s.n))
		s.hosts = make([]*actor.PID, g)
		for k := range g {
			// Blocks of equal size ±1, the larger first.
			first, last := k*s.n/g, (k+1)*s.n/g
			a := &group{clients: make([]client, last-first), supervisor: ctx.Self(), watch: s.watch}
			for j := range a.clients {
				a.clients[j] = client{id: first + j, net: s.net, factory: s.factory, watch: s.watch}
			}
			s.hosts[k] = ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithDispatcher(s.pool)))
			for i := first; i < last; i++ {
				s.pids[i] = s.hosts[k]
			}
		}
	}
	s.waiting = make([]bool, s.n)
	s.stats = make([]optim.Stats, s.n)
	s.ports = make([]*optim.Port, s.n)
	s.router = optim.NewRouter(s.net)
}

// sameActor returns the last client hosted by the actor of client i.
func (s *supervisor) sameActor(i int) int {
	last := i
	for i >= 0 && s.pids[i] != nil && last+1 < len(s.pids) && s.pids[i].Equal(s.pids[last+1]) {
		last++
	}
	return last
}

func (s *supervisor) onBuilt(m *built) {
	if m.err != nil && s.buildErr == nil {
		s.buildErr = fmt.Errorf("building client %d: %w", m.client, m.err)
	}
	s.built++
	if s.built == s.n {
		s.ready <- s.buildErr
	}
}

// roundClosing is the round (of the whole phase) the current step closes.
func (s *supervisor) roundClosing() int {
	if s.spec == nil {
		return s.step - 1
	}
	return s.spec.Offset + s.step - 1
}

func (s *supervisor) phaseName() string {
	if s.spec == nil {
		return "-"
	}
	return s.spec.Name
}

func (s *supervisor) start(ctx actor.Context, m *runProgram) {
	if s.run != nil {
		m.done <- runResult{err: errors.New("actors: a program is already running")}
		return
	}
	if s.remote != nil && s.remote.broken != nil {
		m.done <- runResult{tick: m.startTick, err: s.remote.broken}
		return
	}
	s.run, s.tick, s.total = m, m.startTick, optim.Traffic{}
	if s.remote != nil {
		*s.remote.wire = WireTraffic{PeerBytesSent: make([]int64, len(s.remote.workers))}
	}
	// Remote clients are watched by checkLiveness instead: the watchdog
	// sees only the calls made in this process.
	if s.timeout > 0 && s.remote == nil {
		ctx.SetReceiveTimeout(s.timeout)
	}
	s.next(ctx, nil)
}

// next asks the program for the phase after done and starts it.
func (s *supervisor) next(ctx actor.Context, done *optim.PhaseReport) {
	spec, err := s.run.prog.Next(done)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	if spec == nil {
		s.finish(ctx, nil)
		return
	}
	if spec.Tick >= 0 {
		s.tick = uint64(spec.Tick)
	}
	if s.remote != nil {
		// The workers hold the late messages; a resumed part's go to the
		// workers of their receivers with step 0.
		s.remote.lost, s.remote.late = 0, nil
		for _, l := range spec.Late {
			if l.To < 0 || l.To >= s.n || l.Msg.From < 0 || l.Msg.From >= s.n {
				s.fail(ctx, fmt.Errorf("phase %s: a late message from %d to %d in a network of %d nodes", spec.Name, l.Msg.From, l.To, s.n))
				return
			}
		}
	} else if spec.Late != nil {
		if err := s.router.Restore(spec.Late); err != nil {
			s.fail(ctx, fmt.Errorf("phase %s: %w", spec.Name, err))
			return
		}
	}
	s.spec, s.step = spec, 0
	s.epoch++
	s.rep = &optim.PhaseReport{Spec: spec}
	if spec.Track {
		s.rep.Delivered = spec.Delivered // a part continues its phase's record
		if s.rep.Delivered == nil {
			s.rep.Delivered = optim.NewDeliveryRecord(s.n)
		}
	}
	s.since, s.stepSent = optim.Traffic{}, optim.Traffic{}
	s.sendStep(ctx)
}

func (s *supervisor) sendStep(ctx actor.Context) {
	st := &step{epoch: s.epoch, step: s.step, spec: s.spec, tick: s.tick,
		eval: s.step > 0 && s.spec.ShouldEval(s.step-1), in: s.router.Inboxes()}
	s.acked = 0
	if s.remote != nil {
		for i := range s.waiting {
			s.waiting[i] = true
		}
		s.sendRemoteSteps(ctx, st)
		return
	}
	for i := range s.waiting {
		s.waiting[i] = true
	}
	for _, pid := range s.hosts {
		ctx.Send(pid, st)
	}
}

// onGroupAck takes a group's acknowledgements in client order; the round
// advances once, after the last.
func (s *supervisor) onGroupAck(ctx actor.Context, m *groupAck) {
	ok := true
	for k := range m.acks {
		if ok = s.accept(ctx, &m.acks[k]); !ok {
			break
		}
	}
	m.read.Store(true) // nothing of m is kept: the group may reuse it
	if ok && s.acked == s.n {
		s.advance(ctx)
	}
}

// accept records one client's acknowledgement of the current step; false
// when it is ignored (late) or fails the run.
func (s *supervisor) accept(ctx actor.Context, m *ack) bool {
	if s.run == nil || m.epoch != s.epoch {
		return false // a late answer from a failed phase
	}
	if m.err != nil {
		s.fail(ctx, &optim.ClientError{Client: m.client, Phase: s.spec.Name, Round: m.round, Err: m.err})
		return false
	}
	if m.step != s.step || !s.waiting[m.client] {
		s.fail(ctx, fmt.Errorf("actors: client %d answered step %d during step %d", m.client, m.step, s.step))
		return false
	}
	s.waiting[m.client] = false
	s.stats[m.client] = m.stats
	s.ports[m.client] = m.port
	if s.step == s.spec.Rounds {
		if s.rep.Results == nil {
			s.rep.Results = make([]optim.Result, s.n)
		}
		s.rep.Results[m.client] = m.result
	}
	s.acked++
	return true
}

// advance ends a step that every client has acknowledged: it reports the
// closed round and sends the next step, or ends the phase.
func (s *supervisor) advance(ctx actor.Context) {
	spec := s.spec
	opened := s.tick // the tick of the round opened in this step
	if s.step < spec.Rounds {
		s.tick++ // that round has used its tick
	}
	if s.step > 0 {
		if s.rep.Delivered != nil {
			s.rep.Delivered.Rounds++
		}
		if spec.ShouldEval(s.step - 1) {
			s.rep.Traffic.Add(s.since)
			var c *optim.ConsensusDistance
			if s.remote != nil {
				v := s.remote.consensus
				c = &v
			}
			s.rep.Last, s.rep.LastConsensus = s.stats, c
			err := s.run.sink.Evaluated(&optim.RoundEvent{Phase: spec.Name, Step: spec.Step, Round: spec.Offset + s.step - 1, Rounds: spec.TotalRounds(), Traffic: s.since, Clients: s.stats, Consensus: c})
			s.since = optim.Traffic{}
			if err != nil {
				s.fail(ctx, err)
				return
			}
		}
	}
	if s.step == spec.Rounds {
		switch {
		case s.remote != nil && spec.Continued:
			s.rep.Late = s.remoteLate() // the workers keep them for the next part
			s.remote.kept = s.rep.Delivered
		case s.remote != nil:
			s.since.Dropped += s.remote.lost
		case spec.Continued:
			s.rep.Late = s.router.Late() // the next part delivers them
		case spec.Rounds > 0: // a phase without rounds (a checkpoint's) leaves them alone
			s.router.Close(&s.since)
		}
		s.rep.Traffic.Add(s.since)
		s.total.Add(s.rep.Traffic)
		rep := s.rep
		if rep.Results == nil {
			rep.Results = make([]optim.Result, s.n)
		}
		if err := s.run.sink.Finished(rep); err != nil {
			s.fail(ctx, err)
			return
		}
		s.next(ctx, rep)
		return
	}
	if s.remote != nil {
		// The workers file the round's messages themselves.
		s.step++
		s.sendStep(ctx)
		return
	}
	// Every client has closed round step-1 and opened round step: deliver
	// the round's messages with the next step, senders in ascending order
	// so that every inbox is sorted by sender.
	s.router.Open(opened, spec.LastRound(s.step), s.rep.Delivered)
	for i, p := range s.ports {
		s.router.Deliver(i, p, &s.since, s.rep.Delivered)
	}
	clear(s.ports)
	s.step++
	s.sendStep(ctx)
}

func (s *supervisor) fail(ctx actor.Context, err error) {
	if s.run == nil {
		return
	}
	if s.spec != nil && s.rep != nil {
		s.rep.Traffic.Add(s.since)
		s.total.Add(s.rep.Traffic)
	}
	s.finish(ctx, err)
}

func (s *supervisor) finish(ctx actor.Context, err error) {
	ctx.CancelReceiveTimeout()
	res := runResult{traffic: s.total, tick: s.tick, err: err}
	if s.remote != nil {
		w := *s.remote.wire
		res.wire = &w
	}
	s.run.done <- res
	s.run, s.spec, s.rep = nil, nil, nil
	clear(s.stats)
	clear(s.ports)
	s.router.Close(&optim.Traffic{}) // drop every reference to payloads
}

// missing names the clients holding up the step: those inside a call, or,
// when none is, every client not yet acknowledged. (A group's clients wait
// behind the one its actor is calling, so they are not named with it.)
func (s *supervisor) missing() []int {
	var waiting, busy []int
	for i, w := range s.waiting {
		if w {
			waiting = append(waiting, i)
			if s.watch.busy(i) {
				busy = append(busy, i)
			}
		}
	}
	if len(busy) > 0 {
		return busy
	}
	return waiting
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

// stopSupervisor is the guardian strategy of the supervisor itself: if it
// ever fails despite its own recover, it is stopped (proto.actor's default
// would restart it with a producer that returns the same half-updated
// value) and the waiting caller gets the reason.
type stopSupervisor struct{ failed func(reason interface{}) }

func (st *stopSupervisor) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason interface{}, _ interface{}) {
	sup.StopChildren(child)
	st.failed(reason)
}
