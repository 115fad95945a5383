package actors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"hgpsim/optim"
	"hgpsim/wire"
)

// dialTimeout bounds the check that a worker is reachable before a run.
const dialTimeout = 5 * time.Second

// firstAnswer bounds the wait for a worker's first message after the
// Setup (it beats at once, before building): no answer at all means the
// Setup never reached a worker's actor — the address reaches some other
// server, or an hgpsim worker that does not know the message.
const firstAnswer = 10 * time.Second

// remoteRun is the supervisor's side of a run whose clients live in worker
// processes (hgpsim worker): which worker hosts which block of clients,
// the supervisor's own realization of every client's links (to check the
// workers' digests), and the liveness of the workers. The payloads never
// reach it: the workers send them to each other (see blockRun).
type remoteRun struct {
	scenario []byte
	run      uint64
	workers  []*workerLink
	of       []int         // client → index in workers
	ports    []*optim.Port // by client, for its links
	hosted   int           // workers that have built their clients
	ready    bool          // every worker has
	broken   error         // a worker failed: every later run fails with this
	wire     *WireTraffic  // counted by the supervisor, read after a run

	acked []bool              // by worker: answered the step
	lost  int64               // late messages lost when the phase ended
	late  []optim.LateMessage // left by the workers after a cut phase
	// consensus is worker 0's consensus distance of the step's
	// evaluation: the stats carry no parameter vectors.
	consensus optim.ConsensusDistance
	// kept is the delivery record whose columns the workers keep after a
	// tracked part that the next part continues; a part that continues
	// another record (resumed from a checkpoint) sends them its columns.
	kept *optim.DeliveryRecord
}

// workerLink is one worker as the supervisor sees it.
type workerLink struct {
	addr        string
	host        *actor.PID
	first, last int // its clients: [first, last)
	heard       time.Time
	busy        time.Duration
	busyClient  int
	waiting     time.Duration // for other workers' batches, from the heartbeats
	waitingFor  []int64       // their places
	index       int           // its place among the workers
	hosted      bool
	answered    bool // heard from at all since the Setup
	gone        bool // lost or silent: not asked to release
}

func (w *workerLink) String() string {
	if w.last-w.first == 1 {
		return fmt.Sprintf("worker %s (client %d)", w.addr, w.first)
	}
	return fmt.Sprintf("worker %s (clients %d–%d)", w.addr, w.first, w.last-1)
}

// WireTraffic is what crossed the network in a run with workers, in
// protobuf bytes as encoded: between the supervisor and the workers,
// steps (one per worker and step) out and acknowledgements (one per worker
// and step) in, counted by the supervisor; between workers, the batches
// of payloads, counted by their senders.
type WireTraffic struct {
	Steps     int64 `json:"steps"`
	StepBytes int64 `json:"step_bytes"`
	Acks      int64 `json:"acks"`
	AckBytes  int64 `json:"ack_bytes"`
	// ReportBytes is the part of AckBytes that carries the clients' stats
	// (at evaluations), phase results, delivery records and the late
	// messages a cut phase leaves: all that grows with the model.
	ReportBytes int64 `json:"report_bytes"`
	Rounds      int64 `json:"rounds"` // supervisor steps: one per round, plus one per phase
	// PeerBatches and PeerBytes are the batches workers sent each other;
	// PeerBytesSent is PeerBytes by sending worker, in the order of the
	// run's workers.
	PeerBatches   int64   `json:"peer_batches"`
	PeerBytes     int64   `json:"peer_bytes"`
	PeerBytesSent []int64 `json:"peer_bytes_sent"`
}

// checkWorkers is the supervisor's periodic liveness check of its workers.
type checkWorkers struct{}

// NotInfluenceReceiveTimeout implements actor.NotInfluenceReceiveTimeout.
func (*checkWorkers) NotInfluenceReceiveTimeout() {}

// newRemoteRun assigns the n clients to the workers in contiguous blocks,
// as even as they come (block k is [k·n/W, (k+1)·n/W)). Workers
// beyond n get none and are not used.
func newRemoteRun(addrs []string, n int, scenario []byte) *remoteRun {
	r := &remoteRun{scenario: scenario, run: uint64(time.Now().UnixNano()), of: make([]int, n), ports: make([]*optim.Port, n), wire: &WireTraffic{}}
	w := min(len(addrs), n)
	for k := range w {
		first, last := k*n/w, (k+1)*n/w
		link := &workerLink{addr: addrs[k], host: actor.NewPID(addrs[k], hostID), first: first, last: last, busyClient: -1, index: k}
		for i := first; i < last; i++ {
			r.of[i] = len(r.workers)
		}
		r.workers = append(r.workers, link)
	}
	r.acked = make([]bool, len(r.workers))
	r.wire.PeerBytesSent = make([]int64, len(r.workers))
	return r
}

// supervisorHost is this process's actor system for the supervisors of
// runs with workers. proto.actor's remote.Start sets gRPC's process-wide
// logger, which races with the gRPC goroutines of any remote already
// running in the process; so a process starts one remote, once, and every
// Runtime with workers spawns its supervisor in it (and a process that
// supervises is not also a worker).
var supervisorHost struct {
	once   sync.Once
	system *actor.ActorSystem
	ip     string
	sec    Security
	err    error
}

// supervisorSystem returns the process's supervisor system, listening on
// ip (a free port) with the transport of sec, started by the first call.
func supervisorSystem(ip string, sec Security) (*actor.ActorSystem, error) {
	h := &supervisorHost
	h.once.Do(func() {
		logger := slog.New(slog.NewTextHandler(io.Discard, nil))
		system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
		if _, h.err = startRemote(system, ip, 0, "", sec, nil); h.err != nil {
			system.Shutdown()
			return
		}
		h.system, h.ip, h.sec = system, ip, sec
	})
	if h.err != nil {
		return nil, fmt.Errorf("starting the supervisor's server: %w", h.err)
	}
	if h.ip != ip {
		return nil, fmt.Errorf("this process's supervisor listens on %s, but the route to the workers leaves from %s: a process supervises workers reached from one local address", h.ip, ip)
	}
	if !h.sec.same(sec) {
		return nil, errors.New("this process's supervisor already talks to workers with another secret or TLS setting: a process supervises with one")
	}
	return h.system, nil
}

// buildName names this program's build: module version, VCS revision and
// whether the checkout was modified, Go version and platform. A worker of
// another build refuses a run, since its clients might compute
// differently; the go command stamps the VCS fields only in a checkout
// (not for test binaries), so two builds of one dirty checkout look alike.
func buildName() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown build, " + runtime.Version()
	}
	rev, modified := "unknown", "unknown"
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	return fmt.Sprintf("%s %s, revision %s, modified %s, %s %s/%s", info.Main.Path, info.Main.Version, rev, modified, info.GoVersion, runtime.GOOS, runtime.GOARCH)
}

// localAddressFor checks that every worker is reachable and returns the
// address of this host on the route to them: where the workers can reach
// the supervisor back.
func localAddressFor(addrs []string) (string, error) {
	local := ""
	for _, a := range addrs {
		conn, err := net.DialTimeout("tcp", a, dialTimeout)
		if err != nil {
			return "", fmt.Errorf("worker %s is not reachable (is `hgpsim worker --listen %s` running?): %w", a, a, err)
		}
		if local == "" {
			if tcp, ok := conn.LocalAddr().(*net.TCPAddr); ok {
				local = tcp.IP.String()
			}
		}
		conn.Close()
	}
	if local == "" {
		return "", errors.New("no local address on the route to the workers")
	}
	return local, nil
}

// checkWorkersAccept checks that every worker accepts sec (its secret and
// TLS). It runs after the supervisor's remote has started: remote.Start
// sets gRPC's process-wide logger, which the goroutines of an earlier
// gRPC connection would race with.
func checkWorkersAccept(addrs []string, sec Security) error {
	for _, a := range addrs {
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		err := sec.checkAccepted(ctx, a)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

// setupRemote asks every worker to build its clients.
func (s *supervisor) setupRemote(ctx actor.Context) {
	r := s.remote
	now := time.Now()
	peers := make([]string, len(r.workers))
	firsts := make([]int64, len(r.workers))
	for k, w := range r.workers {
		peers[k], firsts[k] = w.addr, int64(w.first)
	}
	for _, w := range r.workers {
		clients := make([]int64, 0, w.last-w.first)
		for i := w.first; i < w.last; i++ {
			clients = append(clients, int64(i))
		}
		w.heard = now
		ctx.Watch(w.host)
		ctx.Send(w.host, &wire.Setup{Scenario: r.scenario, Clients: clients, SupervisorAddress: ctx.Self().Address,
			SupervisorId: ctx.Self().Id, Run: r.run, HeartbeatNanos: int64(heartbeatPeriod(s.timeout)), Worker: w.addr, Build: buildName(),
			Peers: peers, Firsts: firsts})
	}
}

// heartbeatPeriod is how often workers beat: often enough that a live
// worker is heard several times per round_timeout.
func heartbeatPeriod(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return time.Second
	}
	return min(max(timeout/4, 10*time.Millisecond), time.Second)
}

// checkPeriod is how often the supervisor checks its workers' liveness: a
// silent worker fails the run at most an eighth of round_timeout late.
func checkPeriod(timeout time.Duration) time.Duration {
	return min(max(timeout/8, 5*time.Millisecond), 500*time.Millisecond)
}

func (s *supervisor) worker(addr string) *workerLink {
	for _, w := range s.remote.workers {
		if w.addr == addr {
			return w
		}
	}
	return nil
}

func (s *supervisor) onHosted(ctx actor.Context, m *wire.Hosted) {
	r := s.remote
	if r == nil || m.Run != r.run || r.ready || r.broken != nil {
		return
	}
	var w *workerLink
	for _, l := range r.workers {
		if l.addr == m.Worker {
			w = l
		}
	}
	if w == nil {
		// A worker reached at one address that calls itself another: its
		// clients would be addressed where they are not.
		names := make([]string, len(r.workers))
		for k, l := range r.workers {
			names[k] = l.addr
		}
		s.remoteFailed(ctx, fmt.Errorf("a worker calls itself %s, which is not among the workers %s; start it with --advertise set to the address the run uses", m.Worker, strings.Join(names, ", ")))
		return
	}
	w.heard, w.answered = time.Now(), true
	if m.Error != "" {
		s.remoteFailed(ctx, fmt.Errorf("%v: %s", w, m.Error))
		return
	}
	if len(m.Ids) != w.last-w.first || len(m.Clients) != len(m.Ids) {
		s.remoteFailed(ctx, fmt.Errorf("%v hosts %d clients, want %d", w, len(m.Ids), w.last-w.first))
		return
	}
	for k, id := range m.Ids {
		if m.Clients[k] != int64(w.first+k) {
			s.remoteFailed(ctx, fmt.Errorf("%v hosts client %d in place of %d", w, m.Clients[k], w.first+k))
			return
		}
		s.pids[w.first+k] = actor.NewPID(w.addr, id)
	}
	if !w.hosted {
		w.hosted = true
		r.hosted++
	}
	if r.hosted == len(r.workers) {
		r.ready = true
		s.ready <- nil
	}
}

func (s *supervisor) onHeartbeat(m *wire.Heartbeat) {
	if s.remote == nil || m.Run != s.remote.run {
		return
	}
	if w := s.worker(m.Worker); w != nil {
		w.heard, w.answered = time.Now(), true
		w.busy, w.busyClient = time.Duration(m.BusyNanos), int(m.BusyClient)
		w.waiting, w.waitingFor = time.Duration(m.WaitingNanos), m.WaitingFor
	}
}

func (s *supervisor) onTerminated(ctx actor.Context, m *actor.Terminated) {
	if s.remote == nil {
		return
	}
	for _, w := range s.remote.workers {
		if w.host.Equal(m.Who) {
			w.gone = true
			s.remoteFailed(ctx, fmt.Errorf("%v: connection lost (%s): the worker process exited or the network failed", w, m.Why))
			return
		}
	}
}

// checkLiveness fails the run (or its setup) when a worker has not been
// heard from for round_timeout — it beats several times per timeout while
// alive — or when one of its clients is inside one call for callLimit
// round timeouts (hung).
func (s *supervisor) checkLiveness(ctx actor.Context) {
	r := s.remote
	if r == nil || s.timeout <= 0 || r.broken != nil || (r.ready && s.run == nil) {
		return
	}
	now := time.Now()
	for _, w := range r.workers {
		if d := now.Sub(w.heard); !w.answered && d >= min(s.timeout, firstAnswer) {
			w.gone = true
			s.remoteFailed(ctx, fmt.Errorf("%v: no answer to the setup for %v: something listens there, but not an hgpsim worker of this version (hgpsim worker --listen)", w, d.Round(time.Millisecond)))
			return
		}
		if d := now.Sub(w.heard); d >= s.timeout {
			w.gone = true
			s.remoteFailed(ctx, fmt.Errorf("%v: not heard from for %v (round_timeout %v): the worker is gone or the network is down", w, d.Round(time.Millisecond), s.timeout))
			return
		}
		if err := r.lostBatch(w, s.timeout); err != nil && s.run != nil {
			s.remoteFailed(ctx, err)
			return
		}
		if w.busy >= callLimit*s.timeout {
			what := fmt.Sprintf("client %d has been inside one call", w.busyClient)
			if w.busyClient < 0 {
				what = "the worker has been building the run"
			}
			s.remoteFailed(ctx, fmt.Errorf("%v: %s for %v (more than %d × round_timeout)", w, what, w.busy.Round(time.Millisecond), callLimit))
			return
		}
	}
}

// lostBatch says why w has waited for round_timeout for other workers'
// batches: every worker sends its batches of a round before it answers
// the step that opened it, and the supervisor opens the next round only
// after every answer, so a batch still missing after round_timeout was
// lost between two workers that both still reach the supervisor.
func (r *remoteRun) lostBatch(w *workerLink, timeout time.Duration) error {
	if w.waiting < timeout {
		return nil
	}
	var from []string
	for _, k := range w.waitingFor {
		if k >= 0 && k < int64(len(r.workers)) {
			from = append(from, r.workers[k].String())
		}
	}
	return fmt.Errorf("%v: no batch (or parameters) from %s for %v (round_timeout %v), though it was sent: the network between the workers is down",
		w, strings.Join(from, ", "), w.waiting.Round(time.Millisecond), timeout)
}

// remoteFailed fails the setup or the running program; later runs on this
// runtime fail with the same error.
func (s *supervisor) remoteFailed(ctx actor.Context, err error) {
	r := s.remote
	if r.broken != nil {
		return
	}
	r.broken = err
	if !r.ready {
		s.ready <- err
		return
	}
	if s.run != nil {
		s.fail(ctx, fmt.Errorf("phase %s, round %d: %w", s.phaseName(), s.roundClosing()+1, err))
	}
}

// sendRemoteSteps sends each worker one step for all its clients: control
// only, but at step 0 of a part the saved states and late messages of the
// worker's block.
func (s *supervisor) sendRemoteSteps(ctx actor.Context, st *step) {
	r := s.remote
	tr := r.wire
	tr.Rounds++
	clear(r.acked)
	for _, w := range r.workers {
		var spec *optim.PhaseSpec
		if st.step == 0 {
			spec = st.spec
			if spec.States != nil {
				// A worker loads only its block's saved states (a resumed run).
				own := *spec
				own.States = make([][]byte, len(spec.States))
				copy(own.States[w.first:w.last], spec.States[w.first:w.last])
				spec = &own
			}
		}
		m := wire.NewWorkerStep(st.epoch, st.step, spec, st.tick, st.eval, w.first)
		m.Run = r.run
		if spec != nil {
			m.ContinueRecord = spec.Track && spec.Delivered != nil
			if m.ContinueRecord && spec.Delivered != r.kept {
				// A record the workers never filled (a resumed part).
				m.Record = wire.NewRecordColumns(spec.Delivered, w.first, w.last)
			}
			var late []optim.LateMessage
			for _, l := range spec.Late {
				if l.To >= w.first && l.To < w.last {
					late = append(late, l)
				}
			}
			m.SetLate(late)
		}
		tr.Steps++
		tr.StepBytes += int64(proto.Size(m))
		ctx.Send(w.host, m)
	}
}

// onWorkerAck takes a worker's answer to a step for its block of clients.
func (s *supervisor) onWorkerAck(ctx actor.Context, m *wire.WorkerAck) {
	r := s.remote
	if r == nil || s.run == nil || m.Run != r.run || m.Epoch != s.epoch {
		return // a late answer from a failed phase
	}
	if m.Worker < 0 || m.Worker >= int64(len(r.workers)) {
		s.fail(ctx, fmt.Errorf("actors: an answer from worker %d of %d", m.Worker, len(r.workers)))
		return
	}
	w := r.workers[m.Worker]
	w.heard = time.Now()
	size := int64(proto.Size(m))
	r.wire.Acks++
	r.wire.AckBytes += size
	if err := m.Err(); err != nil {
		if m.ErrorClient < 0 {
			s.remoteFailed(ctx, fmt.Errorf("%v: %w", w, err))
			return
		}
		s.fail(ctx, &optim.ClientError{Client: int(m.ErrorClient), Phase: s.spec.Name, Round: int(m.ErrorRound), Err: fmt.Errorf("on %v: %w", w, err)})
		return
	}
	if int(m.Step) != s.step || r.acked[w.index] {
		s.fail(ctx, fmt.Errorf("actors: %v answered step %d during step %d", w, m.Step, s.step))
		return
	}
	if err := s.takeWorkerAck(w, m); err != nil {
		s.fail(ctx, fmt.Errorf("phase %s, round %d: %v: %w", s.phaseName(), s.roundClosing()+1, w, err))
		return
	}
	r.wire.ReportBytes += size - int64(proto.Size(&wire.WorkerAck{Run: m.Run, Epoch: m.Epoch, Step: m.Step, Worker: m.Worker, Links: m.Links, Traffic: m.Traffic}))
	r.acked[w.index] = true
	for i := w.first; i < w.last; i++ {
		s.waiting[i] = false
	}
	s.acked += w.last - w.first
	if s.acked == s.n {
		s.advance(ctx)
	}
}

// takeWorkerAck records a worker's answer: its clients' stats and
// results, what it filed, its columns of the delivery record, the late
// messages it keeps; and it checks the links its clients realized
// against the supervisor's own realization (a worker that built another
// network fails the run).
func (s *supervisor) takeWorkerAck(w *workerLink, m *wire.WorkerAck) error {
	r := s.remote
	stats := s.stats[w.first:w.last]
	clear(stats)
	if err := m.OptimStats(stats); err != nil {
		return err
	}
	if w.index == 0 {
		r.consensus = optim.ConsensusDistance{Value: m.Consensus, Clients: int(m.XClients)}
	}
	if s.step == s.spec.Rounds {
		if s.rep.Results == nil {
			s.rep.Results = make([]optim.Result, s.n)
		}
		if err := m.OptimResults(s.rep.Results[w.first:w.last]); err != nil {
			return err
		}
		late, err := m.OptimLate()
		if err != nil {
			return err
		}
		r.late = append(r.late, late...)
		if len(m.Record) > 0 {
			if s.rep.Delivered == nil {
				return errors.New("a delivery record for an untracked phase")
			}
			first, last, err := wire.ApplyRecordColumns(s.rep.Delivered, m.Record)
			if err != nil {
				return err
			}
			if first != w.first || last != w.last {
				return fmt.Errorf("the delivery record of clients %d–%d", first, last-1)
			}
		}
	}
	if s.step < s.spec.Rounds {
		if got, want := m.Links, s.linksDigest(w); got != want {
			return fmt.Errorf("its clients realized other links than the supervisor (digest %x, here %x): the worker built another network (a different hgpsim version?)", got, want)
		}
	}
	if len(m.Traffic) != 6 {
		return fmt.Errorf("%d traffic counts, want 6", len(m.Traffic))
	}
	t := m.Traffic
	s.since.Add(optim.Traffic{Messages: t[0], Bytes: t[1], Dropped: t[2]})
	r.lost += t[3]
	r.wire.PeerBatches += t[4]
	r.wire.PeerBytes += t[5]
	r.wire.PeerBytesSent[w.index] += t[5]
	return nil
}

// linksDigest realizes the links of w's clients for the round opened in
// this step, as the clients did (a pure function of seed, link and tick).
func (s *supervisor) linksDigest(w *workerLink) uint64 {
	r := s.remote
	h := wire.DigestStart
	for i := w.first; i < w.last; i++ {
		p := r.ports[i]
		if p == nil {
			p = optim.NewPort(s.net, i)
			r.ports[i] = p
		}
		round := p.Open(s.spec.Name, s.spec.Offset+s.step, s.tick)
		h = wire.LinksDigest(h, i, round.Links)
	}
	return h
}

// remoteLate returns the late messages the workers left after a cut
// phase, in the order they were sent, as one router would hold them: by
// the round they were sent in, then by sender, then by receiver (a
// sender's messages to one receiver keep their order).
func (s *supervisor) remoteLate() []optim.LateMessage {
	late := s.remote.late
	s.remote.late = nil
	slices.SortStableFunc(late, func(a, b optim.LateMessage) int {
		if c := cmp.Compare(a.Msg.Round, b.Msg.Round); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Msg.From, b.Msg.From); c != 0 {
			return c
		}
		return cmp.Compare(a.To, b.To)
	})
	return late
}

// releaseWorkers tells every worker that hosted clients of this run to
// drop them, and waits (bounded) for each to confirm.
func releaseWorkers(system *actor.ActorSystem, r *remoteRun) {
	futures := make([]*actor.Future, 0, len(r.workers))
	for _, w := range r.workers {
		if !w.gone {
			futures = append(futures, system.Root.RequestFuture(w.host, &wire.Release{Run: r.run}, time.Second))
		}
	}
	for _, f := range futures {
		_, _ = f.Result() // best effort: a worker that does not answer releases when it sees the supervisor gone
	}
}
