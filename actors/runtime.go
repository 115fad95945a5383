package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
)

// Options configures a Runtime.
type Options struct {
	// RoundTimeout fails a run that makes no progress for this long: no
	// message handled, no client call begun or finished, and no client
	// inside a call — or one client call running for 10 × RoundTimeout
	// (0: wait forever).
	RoundTimeout time.Duration
	// Logger receives proto.actor's own logs; nil discards them.
	Logger *slog.Logger
	// Workers, when not empty, are the addresses (host:port) of worker
	// processes (StartWorker) that host the clients, in contiguous blocks;
	// the factory is then not used: each worker builds its clients from
	// Scenario with its BuildFunc.
	Workers []string
	// Scenario is the run's resolved scenario (YAML), sent to the workers.
	Scenario []byte
	// Security is the transport to the workers: their shared secret and
	// TLS (see Security). One process supervises with one setting.
	Security Security
	// Groups is how many actors host the clients in this process, each a
	// contiguous block (0: DefaultGroups). Results do not depend on it.
	Groups int
}

// DefaultGroups is the number of in-process actors hosting n clients when
// Options.Groups is 0: one on one core (GOMAXPROCS = 1), where there is
// nothing to balance, and groupsPerProc per core otherwise, at most n.
func DefaultGroups(n int) int {
	p := runtime.GOMAXPROCS(0)
	if p == 1 {
		return 1
	}
	return max(1, min(n, groupsPerProc*p))
}

// groupsPerProc: with two cores, in one run alternating the drivers every
// 100 rounds, four groups per core ran an n = 100 SGP round in 0.69 of the
// sequential driver's time, against 0.82 with one group per core (a core
// slowed by another process holds up its whole group) and 0.76 with one
// actor per client. On one core one group is as fast as any (nothing to
// balance) and has the fewest hand-offs.
const groupsPerProc = 4

// Runtime runs programs on proto.actor. It implements optim.Driver. A
// Runtime is used by one goroutine at a time; Close releases its actors.
type Runtime struct {
	system *actor.ActorSystem
	sup    *actor.PID
	pool   *workers
	tick   uint64

	mu      sync.Mutex
	pending chan<- runResult // the running Execute's answer, for the guardian

	shared   bool // system is the process's supervisor system (with workers)
	rrun     *remoteRun
	stopTick chan struct{}
	ticks    sync.WaitGroup
	wire     *WireTraffic // of the last run, with workers
}

// New starts an actor system with actors hosting the clients of nw in
// groups (Options.Groups); each actor builds its clients with factory. An error of the factory is returned.
func New(nw *graph.Network, factory optim.ClientFactory, opt Options) (*Runtime, error) {
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var system *actor.ActorSystem
	if len(opt.Workers) > 0 {
		local, err := localAddressFor(opt.Workers)
		if err == nil {
			system, err = supervisorSystem(local, opt.Security)
		}
		if err == nil {
			err = checkWorkersAccept(opt.Workers, opt.Security)
		}
		if err != nil {
			return nil, err
		}
	} else {
		system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	}
	ready := make(chan error, 1)
	pool := newWorkers()
	r := &Runtime{system: system, pool: pool, shared: len(opt.Workers) > 0}
	groups := opt.Groups
	if groups <= 0 {
		groups = DefaultGroups(nw.N)
	}
	sup := &supervisor{n: nw.N, groups: groups, net: nw, factory: factory, pool: pool, timeout: opt.RoundTimeout, watch: newWatchdog(nw.N), ready: ready}
	if len(opt.Workers) > 0 {
		r.rrun = newRemoteRun(opt.Workers, nw.N, opt.Scenario)
		sup.remote = r.rrun
	}
	clients := stopAndReport{clientOf: func(pid *actor.PID) int {
		for i, p := range sup.pids {
			if p.Equal(pid) {
				return i
			}
		}
		return -1
	}}
	guard := &stopSupervisor{failed: r.supervisorFailed} // a pointer: guardians are keyed by their strategy
	props := actor.PropsFromProducer(func() actor.Actor { return sup },
		actor.WithSupervisor(clients), actor.WithGuardian(guard), actor.WithDispatcher(pool))
	r.sup = system.Root.Spawn(props)
	if r.rrun != nil && opt.RoundTimeout > 0 {
		r.stopTick = make(chan struct{})
		r.ticks.Add(1)
		go r.tickLiveness(checkPeriod(opt.RoundTimeout))
	}
	if err := <-ready; err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Runtime) supervisorFailed(reason interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending != nil {
		r.pending <- runResult{err: fmt.Errorf("actors: the supervisor failed: %v", reason)}
		r.pending = nil
	}
}

// Execute implements optim.Driver. Cancelling ctx fails the run at the
// next round boundary.
func (r *Runtime) Execute(ctx context.Context, prog optim.Program, sink optim.Sink) (optim.Traffic, error) {
	if err := ctx.Err(); err != nil {
		return optim.Traffic{}, err
	}
	done := make(chan runResult, 2)
	r.mu.Lock()
	r.pending = done
	r.mu.Unlock()
	r.system.Root.Send(r.sup, &runProgram{prog: prog, sink: sink, startTick: r.tick, done: done})
	var res runResult
	select {
	case res = <-done:
	case <-ctx.Done():
		r.system.Root.Send(r.sup, &abort{err: ctx.Err()})
		res = <-done
	}
	r.mu.Lock()
	r.pending = nil
	r.mu.Unlock()
	r.tick = res.tick
	r.wire = res.wire
	return res.traffic, res.err
}

// Wire returns what crossed between the supervisor and its workers in the
// last run (nil without workers).
func (r *Runtime) Wire() *WireTraffic { return r.wire }

// tickLiveness asks the supervisor to check its workers every period.
func (r *Runtime) tickLiveness(every time.Duration) {
	defer r.ticks.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stopTick:
			return
		case <-t.C:
			r.system.Root.Send(r.sup, &checkWorkers{})
		}
	}
}

// Close stops all actors; workers are told to drop this run's clients.
func (r *Runtime) Close() {
	if r.stopTick != nil {
		close(r.stopTick)
		r.ticks.Wait()
		r.stopTick = nil
	}
	_ = r.system.Root.StopFuture(r.sup).Wait()
	if r.rrun != nil {
		releaseWorkers(r.system, r.rrun)
	}
	if !r.shared {
		r.system.Shutdown()
	}
	r.pool.close()
}
