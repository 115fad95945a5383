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
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

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
