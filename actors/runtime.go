package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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
}

// Runtime runs programs on proto.actor. It implements optim.Driver. A
// Runtime is used by one goroutine at a time; Close releases its actors.
type Runtime struct {
	system *actor.ActorSystem
	sup    *actor.PID
	pool   *workers
	tick   uint64

	mu      sync.Mutex
	pending chan<- runResult // the running Execute's answer, for the guardian
}

// New starts an actor system with one actor per client of nw; each actor
// builds its client with factory. An error of the factory is returned.
func New(nw *graph.Network, factory optim.ClientFactory, opt Options) (*Runtime, error) {
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	ready := make(chan error, 1)
	pool := newWorkers()
	r := &Runtime{system: system, pool: pool}
	sup := &supervisor{n: nw.N, net: nw, factory: factory, pool: pool, timeout: opt.RoundTimeout, watch: newWatchdog(nw.N), ready: ready}
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
	return res.traffic, res.err
}

// Close stops all actors.
func (r *Runtime) Close() {
	r.system.Root.Stop(r.sup)
	r.system.Shutdown()
	r.pool.close()
}
