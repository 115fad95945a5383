package actors

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"

	"hgpsim/graph"
	"hgpsim/optim"
)

// hostID is the actor id of a worker's host actor, the one a supervisor
// sends its Setup to: a fixed name, so that an address is all a supervisor
// needs to know about a worker.
const hostID = "hgpsim-worker"

// BuildFunc turns the scenario a supervisor sends (the resolved scenario
// as YAML) into the run's network and client factory, deterministically,
// so that a client built on a worker is the client the in-process runtime
// would have built. clients are the ids the worker hosts, the only ones
// the factory is asked for. hgpsim passes run.Build hosting that block.
type BuildFunc func(scenario []byte, clients []int64) (*graph.Network, optim.ClientFactory, error)

// Worker is a process's share of a distributed run: an actor system
// reachable over proto.actor remote that hosts, for one supervisor at a
// time, the client actors the supervisor assigns to it.
type Worker struct {
	system *actor.ActorSystem
	remote *remote.Remote
	pool   *workers
	host   *actor.PID
	closed sync.Once
}

// WorkerOptions configures a Worker.
type WorkerOptions struct {
	// Advertise is the address (host:port) the worker calls itself, when
	// the listening address is not one (0.0.0.0, say). Supervisors may use
	// any address that reaches the worker (see aliasResolver).
	Advertise string
	// Logger receives proto.actor's own logs; nil discards them.
	Logger *slog.Logger
	// Events, when not nil, is told what the worker does: a run hosted
	// (its supervisor and clients), refused, failed or released, and
	// connections refused for their secret.
	Events func(msg string)
	// Security is the transport: the shared secret supervisors must
	// present, and TLS. The zero value accepts anyone who reaches the port.
	Security Security
}

// SplitAddress parses host:port for a listening address: the port may be
// 0 (any free port).
func SplitAddress(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("address %q: want host:port: %v", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("address %q: the port must be a number in 0 … 65535", addr)
	}
	return host, p, nil
}

// maxMessage is the largest gRPC message either side accepts: gRPC's
// default, 4 MiB, is a single step at n = 100 and d = 7850 (60 messages
// of 63 KB), and proto.actor sends a batch of envelopes as one message.
const maxMessage = math.MaxInt32

// writerBatch is how many envelopes proto.actor packs into one gRPC
// message (its default, 1000, would put a whole round of large steps into
// one message).
const writerBatch = 16

// aliasResolver delivers locally what is addressed to this worker's actors
// under another name of the worker (localhost for 127.0.0.1, a host name
// for its IP, …). proto.actor treats a PID whose address is not the one
// the system calls itself as remote and sends it out again — to this same
// worker, forever. The worker's actors all have ids under hostID, which a
// supervisor's actors do not have (they are $-numbered); the other
// workers' hosts do, and *others names them: the workers of the running
// run but this one, by the addresses the run uses.
func aliasResolver(system *actor.ActorSystem, others *atomic.Pointer[map[string]bool]) actor.AddressResolver {
	return func(pid *actor.PID) (actor.Process, bool) {
		if !strings.HasPrefix(pid.Id, hostID) {
			return nil, false
		}
		if o := others.Load(); o != nil && (*o)[pid.Address] {
			return nil, false
		}
		if ref, ok := system.ProcessRegistry.GetLocal(pid.Id); ok {
			return ref, true
		}
		return system.DeadLetter, true // a stopped client: never out again
	}
}

// startRemote starts proto.actor remote on system, listening on host:port
// with the transport of sec (refused is told of calls it refuses).
// remote.Start panics when it cannot listen; that is an error here.
func startRemote(system *actor.ActorSystem, host string, port int, advertise string, sec Security, refused func(string)) (r *remote.Remote, err error) {
	opts, err := sec.remoteOptions(refused)
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		remote.WithCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)),
		remote.WithEndpointWriterBatchSize(writerBatch))
	if advertise != "" {
		opts = append(opts, remote.WithAdvertisedHost(advertise))
	}
	r = remote.NewRemote(system, remote.Configure(host, port, opts...))
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("listening on %s: %v", net.JoinHostPort(host, strconv.Itoa(port)), p)
		}
	}()
	r.Start()
	return r, nil
}

// StartWorker listens on listen (host:port; port 0 picks a free one) and
// hosts clients for the supervisors that ask, building them with build.
func StartWorker(listen string, build BuildFunc, opt WorkerOptions) (*Worker, error) {
	host, port, err := SplitAddress(listen)
	if err != nil {
		return nil, err
	}
	if opt.Advertise != "" {
		if _, _, err := SplitAddress(opt.Advertise); err != nil {
			return nil, fmt.Errorf("advertised %w", err)
		}
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	// Before remote.Start, which registers its own resolver after this
	// one: resolvers are asked in order.
	others := &atomic.Pointer[map[string]bool]{}
	system.ProcessRegistry.RegisterAddressResolver(aliasResolver(system, others))
	rem, err := startRemote(system, host, port, opt.Advertise, opt.Security, opt.Events)
	if err != nil {
		system.Shutdown()
		return nil, err
	}
	w := &Worker{system: system, remote: rem, pool: newWorkers()}
	h := &workerHost{build: build, pool: w.pool, self: system.Address(), events: opt.Events, version: buildName(), others: others, sec: opt.Security}
	props := actor.PropsFromProducer(func() actor.Actor { return h },
		actor.WithSupervisor(actor.NewOneForOneStrategy(0, 0, func(interface{}) actor.Directive { return actor.StopDirective })),
		actor.WithDispatcher(w.pool))
	w.host, err = system.Root.SpawnNamed(props, hostID)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting the worker actor: %w", err)
	}
	return w, nil
}

// Address is where supervisors reach the worker (host:port).
func (w *Worker) Address() string { return w.system.Address() }

// Close stops the worker's actors and its server; later calls do nothing.
func (w *Worker) Close() {
	w.closed.Do(func() {
		if w.host != nil {
			_ = w.system.Root.StopFuture(w.host).Wait()
		}
		w.remote.Shutdown(false)
		w.system.Shutdown()
		w.pool.close()
	})
}
