package actors

import (
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
// the supervisor's copy of every client's port (rebuilt from each
// acknowledgement, for the router), and the liveness of the workers.
type remoteRun struct {
	scenario []byte
	run      uint64
	workers  []*workerLink
	of       []int         // client → index in workers
	ports    []*optim.Port // by client
	hosted   int           // workers that have built their clients
	ready    bool          // every worker has
	broken   error         // a worker failed: every later run fails with this
	wire     *WireTraffic  // counted by the supervisor, read after a run
}

// workerLink is one worker as the supervisor sees it.
type workerLink struct {
	addr        string
	host        *actor.PID
	first, last int // its clients: [first, last)
	heard       time.Time
	busy        time.Duration
	busyClient  int
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

// WireTraffic is what crossed between the supervisor and its workers, in
// protobuf bytes as encoded: steps (one per worker, with its clients'
// inboxes) out, acknowledgements (one per client, with its outbox, stats
// and results) in.
type WireTraffic struct {
	Steps     int64 `json:"steps"`
	StepBytes int64 `json:"step_bytes"`
	Acks      int64 `json:"acks"`
	AckBytes  int64 `json:"ack_bytes"`
	Rounds    int64 `json:"rounds"` // supervisor steps: one per round, plus one per phase
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
		link := &workerLink{addr: addrs[k], host: actor.NewPID(addrs[k], hostID), first: first, last: last, busyClient: -1}
		for i := first; i < last; i++ {
			r.of[i] = len(r.workers)
		}
		r.workers = append(r.workers, link)
	}
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
	for _, w := range r.workers {
		clients := make([]int64, 0, w.last-w.first)
		for i := w.first; i < w.last; i++ {
			clients = append(clients, int64(i))
		}
		w.heard = now
		ctx.Watch(w.host)
		ctx.Send(w.host, &wire.Setup{Scenario: r.scenario, Clients: clients, SupervisorAddress: ctx.Self().Address,
			SupervisorId: ctx.Self().Id, Run: r.run, HeartbeatNanos: int64(heartbeatPeriod(s.timeout)), Worker: w.addr, Build: buildName()})
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

// sendRemoteSteps sends each worker one step for all its clients, in the
// wire encoding, each payload once per worker.
func (s *supervisor) sendRemoteSteps(ctx actor.Context, st *step) {
	var spec *optim.PhaseSpec
	if st.step == 0 {
		spec = st.spec
	}
	tr := s.remote.wire
	tr.Rounds++
	for _, w := range s.remote.workers {
		spec := spec
		if spec != nil && spec.States != nil {
			// A worker loads only its block's saved states (a resumed run).
			own := *spec
			own.States = make([][]byte, len(spec.States))
			copy(own.States[w.first:w.last], spec.States[w.first:w.last])
			spec = &own
		}
		m := wire.NewWorkerStep(st.epoch, st.step, spec, st.tick, st.eval, w.first, st.in[w.first:w.last])
		m.Run = s.remote.run
		tr.Steps++
		tr.StepBytes += int64(proto.Size(m))
		ctx.Send(w.host, m)
	}
}

// onWireAck turns a worker's acknowledgement into the supervisor's ack,
// with a port rebuilt from what the client addressed.
func (s *supervisor) onWireAck(ctx actor.Context, m *wire.Ack) {
	r := s.remote
	if r == nil || s.run == nil || m.Epoch != s.epoch {
		return // a late answer from a failed phase
	}
	if m.Client < 0 || m.Client >= int64(s.n) {
		s.fail(ctx, fmt.Errorf("actors: an acknowledgement from client %d, which is not in [0, %d)", m.Client, s.n))
		return
	}
	c := int(m.Client)
	w := r.workers[r.of[c]]
	w.heard = time.Now()
	r.wire.Acks++
	r.wire.AckBytes += int64(proto.Size(m))
	a := &ack{client: c, epoch: m.Epoch, step: int(m.Step), round: int(m.Round)}
	if err := m.Err(); err != nil {
		a.err = fmt.Errorf("on %v: %w", w, err)
		s.onAck(ctx, a)
		return
	}
	var err error
	if a.stats, err = m.OptimStats(); err == nil {
		a.result, err = m.OptimResult()
	}
	if err == nil && a.step == s.step && a.step < s.spec.Rounds {
		a.port, err = s.remotePort(c, a.step, m)
	}
	if err != nil {
		a.err = fmt.Errorf("on %v: acknowledgement: %w", w, err)
	}
	s.onAck(ctx, a)
}

// remotePort rebuilds client c's port for the round opened in step: the
// supervisor realizes the client's links itself (a pure function of seed,
// link and tick) and checks them against the worker's, which catches a
// worker that built a different network, then posts what the client
// addressed, in its order.
func (s *supervisor) remotePort(c, step int, m *wire.Ack) (*optim.Port, error) {
	r := s.remote
	p := r.ports[c]
	if p == nil {
		p = optim.NewPort(s.net, c)
		r.ports[c] = p
	}
	round := p.Open(s.spec.Name, s.spec.Offset+step, s.tick)
	links, err := m.OptimLinks()
	if err != nil {
		return nil, err
	}
	if !slices.Equal(links, round.Links) {
		return nil, fmt.Errorf("the client's links %v differ from %v here: the worker built another network (a different hgpsim version?)", links, round.Links)
	}
	envs, err := m.OptimEnvelopes()
	if err != nil {
		return nil, err
	}
	for _, e := range envs {
		p.Post(e.To, e.Weight, e.Pushed, e.Payload)
	}
	return p, nil
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
