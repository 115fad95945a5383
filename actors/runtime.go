package actors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
)

// Options configures a Runtime.
type Options struct {
	// RoundTimeout fails a phase when no client answers for this long
	// (0: wait forever).
	RoundTimeout time.Duration
	// Logger receives proto.actor's own logs; nil discards them.
	Logger *slog.Logger
}

// Runtime runs phases on proto.actor. It implements optim.Driver. A Runtime
// is used by one goroutine at a time; Close releases its actors.
type Runtime struct {
	net    *graph.Network
	system *actor.ActorSystem
	sup    *actor.PID
	pool   *workers
	tick   uint64
}

// New starts an actor system with one actor per client of nw.
func New(nw *graph.Network, opt Options) *Runtime {
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	rt := &router{net: nw}
	ready := make(chan []*actor.PID, 1)
	pool := newWorkers()
	sup := &supervisor{n: nw.N, router: rt, pool: pool, timeout: opt.RoundTimeout, ready: ready}
	strategy := stopAndReport{clientOf: func(pid *actor.PID) int {
		for i, p := range rt.pids {
			if p.Equal(pid) {
				return i
			}
		}
		return -1
	}}
	props := actor.PropsFromProducer(func() actor.Actor { return sup },
		actor.WithSupervisor(strategy), actor.WithDispatcher(pool))
	pid := system.Root.Spawn(props)
	<-ready
	return &Runtime{net: nw, system: system, sup: pid, pool: pool}
}

// Run implements optim.Driver. Cancelling ctx fails the phase.
func (r *Runtime) Run(ctx context.Context, p *optim.Phase, sink optim.Sink) (optim.Traffic, error) {
	if err := ctx.Err(); err != nil {
		return optim.Traffic{}, fmt.Errorf("phase %s: %w", p.Name, err)
	}
	done := make(chan phaseResult, 1)
	r.system.Root.Send(r.sup, &runPhase{phase: p, sink: sink, startTick: r.tick, done: done})
	var res phaseResult
	select {
	case res = <-done:
	case <-ctx.Done():
		r.system.Root.Send(r.sup, &abort{err: fmt.Errorf("phase %s: %w", p.Name, ctx.Err())})
		res = <-done
	}
	r.tick += uint64(p.Rounds)
	return res.traffic, res.err
}

// Close stops all actors.
func (r *Runtime) Close() {
	r.system.Root.Stop(r.sup)
	r.system.Shutdown()
	r.pool.close()
}
