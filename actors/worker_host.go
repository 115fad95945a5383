package actors

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
	"hgpsim/wire"
)

// workerHost is the actor a supervisor talks to: it builds the run it is
// sent, spawns one client actor per assigned client, reports when they are
// built, beats while a run is attached, and drops the run when released
// or when the supervisor's process is gone.
type workerHost struct {
	build   BuildFunc
	pool    *workers
	self    string
	events  func(string)
	name    string                           // the address the current run's supervisor uses
	version string                           // this build (buildName)
	others  *atomic.Pointer[map[string]bool] // for aliasResolver
	sec     Security                         // the transport, to check the other workers accept it

	block *blockRun // the rounds of the run, once built

	run     uint64
	sup     *actor.PID
	clients []*actor.PID
	index   []int64
	pending int
	errs    []error
	watch   *watchdog
	busy    *atomic.Pointer[watchdog]   // the run's watchdog, for the heartbeat; nil while building
	waiting *atomic.Pointer[waitingFor] // the run's wait for other workers, for the heartbeat
	stop    chan struct{}
	beats   sync.WaitGroup
}

func (h *workerHost) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *wire.Setup:
		h.setup(ctx, m)
	case *built:
		h.pending--
		if m.err != nil {
			h.errs = append(h.errs, fmt.Errorf("client %d: %w", m.client, m.err))
		}
		if h.pending == 0 {
			h.hosted(ctx, errors.Join(h.errs...))
		}
	case *wire.WorkerStep:
		if h.block != nil && m.Run == h.run {
			h.onStep(ctx, m)
		}
	case *wire.PeerBatch:
		if h.block != nil {
			h.onBatch(ctx, m)
		}
	case *wire.PeerParams:
		if h.block != nil {
			h.onParams(ctx, m)
		}
	case *clientAck:
		h.onClientAck(ctx, m)
	case *wire.Release:
		if m.Run == h.run {
			h.release(ctx)
		}
		if ctx.Sender() != nil {
			ctx.Respond(&wire.Release{Run: m.Run})
		}
	case *actor.Terminated:
		// The supervisor's process is gone: nobody will release this run.
		if h.sup != nil && m.Who.Equal(h.sup) {
			h.release(ctx)
		} else if h.block != nil && h.sup != nil {
			if k := h.block.peerOf(m.Who); k >= 0 {
				h.peerLost(ctx, k, m.Why.String())
			}
		}
	case *actor.Stopping:
		h.release(ctx)
	}
}

func (h *workerHost) event(format string, a ...any) {
	if h.events != nil {
		h.events(fmt.Sprintf(format, a...))
	}
}

func (h *workerHost) setup(ctx actor.Context, m *wire.Setup) {
	sup := actor.NewPID(m.SupervisorAddress, m.SupervisorId)
	if h.sup != nil && !h.sup.Equal(sup) {
		// One run at a time: a second supervisor must not take the clients
		// of a run in progress. A run whose supervisor is gone is released
		// when its connection drops (Terminated).
		name := m.Worker
		if name == "" {
			name = h.self
		}
		ctx.Send(sup, &wire.Hosted{Run: m.Run, Worker: name,
			Error: fmt.Sprintf("busy: hosting a run of the supervisor at %s (a worker hosts one run at a time)", h.sup.Address)})
		h.event("refused a run of %s: busy with a run of %s", sup.Address, h.sup.Address)
		return
	}
	h.release(ctx) // the same supervisor's next run replaces its last
	h.run = m.Run
	h.name = h.self
	if m.Worker != "" {
		h.name = m.Worker // the supervisor knows this worker by that address
	}
	h.sup = sup
	ctx.Watch(h.sup)
	h.index = m.Clients
	fail := func(err error) {
		ctx.Send(h.sup, &wire.Hosted{Run: h.run, Worker: h.name, Error: err.Error()})
		h.event("could not host a run of %s: %v", m.SupervisorAddress, err)
		h.release(ctx)
	}
	if len(m.Clients) == 0 {
		fail(errors.New("no clients assigned"))
		return
	}
	if m.Build != "" && h.version != m.Build {
		fail(fmt.Errorf("another build: the worker is %q, the supervisor %q; its clients might compute differently", h.version, m.Build))
		return
	}
	// Beat from the start: building (reading the data) may take longer
	// than round_timeout.
	h.stop = make(chan struct{})
	h.busy = &atomic.Pointer[watchdog]{}
	h.waiting = &atomic.Pointer[waitingFor]{}
	if every := time.Duration(m.HeartbeatNanos); every > 0 {
		h.beats.Add(1)
		go h.beat(ctx.ActorSystem(), h.sup, h.run, h.name, h.busy, h.waiting, every, h.stop)
	}
	nw, factory, err := h.buildRun(m.Scenario, m.Clients)
	if err != nil {
		fail(fmt.Errorf("building the run: %w", err))
		return
	}
	ids := make([]int, len(m.Clients))
	for k, c := range m.Clients {
		if c < 0 || c >= int64(nw.N) {
			fail(fmt.Errorf("client %d is not in [0, %d)", c, nw.N))
			return
		}
		ids[k] = int(c)
	}
	if h.block, err = h.newBlock(m, nw); err != nil {
		fail(err)
		return
	}
	// A connection to another worker that fails (its TLS or secret)
	// would surface only after proto.actor's retries, about 10 s into the
	// run: check each now.
	for k, a := range h.block.names {
		if k == h.block.me {
			continue
		}
		check, cancel := context.WithTimeout(context.Background(), dialTimeout)
		err := h.sec.checkAccepted(check, a)
		cancel()
		if err != nil {
			fail(fmt.Errorf("cannot reach %s: %w", h.block.peerName(k), err))
			return
		}
	}
	h.watch = newWatchdog(nw.N)
	h.busy.Store(h.watch)
	h.pending, h.errs = len(ids), nil
	for _, i := range ids {
		c := &remoteClient{client: client{id: i, net: nw, factory: factory, watch: h.watch}, k: i - ids[0]}
		h.clients = append(h.clients, ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return c }, actor.WithDispatcher(h.pool))))
	}
}

// buildRun calls build with a panic turned into an error: a panicking
// build must fail the setup, not leave the supervisor waiting while the
// heartbeats say the worker is alive.
func (h *workerHost) buildRun(scenario []byte, clients []int64) (nw *graph.Network, factory optim.ClientFactory, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	nw, factory, err = h.build(scenario, clients)
	if err == nil && (nw == nil || factory == nil) {
		err = errors.New("no network or client factory")
	}
	return nw, factory, err
}

// newBlock checks the Setup's peers and blocks and returns the worker's
// share of the rounds.
func (h *workerHost) newBlock(m *wire.Setup, nw *graph.Network) (*blockRun, error) {
	me := slices.Index(m.Peers, h.name)
	if me < 0 || len(m.Firsts) != len(m.Peers) {
		return nil, fmt.Errorf("the run's workers %v do not include this worker, %s, with a block of clients", m.Peers, h.name)
	}
	firsts := make([]int, len(m.Firsts)+1)
	for k, f := range m.Firsts {
		firsts[k] = int(f)
		if f < 0 || (k > 0 && f <= m.Firsts[k-1]) || f >= int64(nw.N) {
			return nil, fmt.Errorf("the blocks of clients %v do not split [0, %d)", m.Firsts, nw.N)
		}
	}
	firsts[len(m.Firsts)] = nw.N
	if m.Firsts[0] != 0 {
		return nil, fmt.Errorf("the blocks of clients %v do not split [0, %d)", m.Firsts, nw.N)
	}
	// The block is every client from its first to its last, in order: a
	// gap would leave an answer missing forever, a stray id index past
	// the block's answers.
	if len(m.Clients) != firsts[me+1]-firsts[me] {
		return nil, fmt.Errorf("this worker has %d clients, its block %d–%d has %d", len(m.Clients), firsts[me], firsts[me+1]-1, firsts[me+1]-firsts[me])
	}
	for k, c := range m.Clients {
		if c != int64(firsts[me]+k) {
			return nil, fmt.Errorf("this worker's clients are not its block %d–%d in order: client %d at place %d", firsts[me], firsts[me+1]-1, c, k)
		}
	}
	if h.others != nil {
		others := map[string]bool{}
		for k, a := range m.Peers {
			if k != me {
				others[a] = true
			}
		}
		h.others.Store(&others)
	}
	return newBlockRun(h.run, nw, me, firsts, m.Peers, h.waiting), nil
}

func (h *workerHost) hosted(ctx actor.Context, err error) {
	msg := &wire.Hosted{Run: h.run, Worker: h.name, Clients: h.index}
	if err != nil {
		msg.Error = err.Error()
	} else {
		msg.Ids = make([]string, len(h.clients))
		for k, pid := range h.clients {
			msg.Ids[k] = pid.Id
		}
	}
	ctx.Send(h.sup, msg)
	if err != nil {
		h.event("could not build the clients of a run of %s: %v", h.sup.Address, err)
		h.release(ctx)
		return
	}
	// A lost connection to another worker fails the run: its batches
	// would never come.
	for _, p := range h.block.peers {
		if p != nil {
			ctx.Watch(p)
		}
	}
	h.event("hosting clients %d–%d of a run of %s", h.index[0], h.index[len(h.index)-1], h.sup.Address)
}

// release stops the run's clients and its heartbeat.
func (h *workerHost) release(ctx actor.Context) {
	if len(h.clients) > 0 {
		h.event("released the run of %s", h.sup.Address)
	}
	if h.stop != nil {
		close(h.stop)
		h.beats.Wait()
		h.stop = nil
	}
	for _, pid := range h.clients {
		ctx.Stop(pid)
	}
	if h.sup != nil {
		ctx.Unwatch(h.sup)
	}
	if h.block != nil {
		for _, p := range h.block.peers {
			if p != nil {
				ctx.Unwatch(p)
			}
		}
	}
	h.clients, h.index, h.sup, h.watch, h.busy, h.pending, h.block = nil, nil, nil, nil, nil, 0, nil
}

// beat tells the supervisor, every period, that this worker is alive and
// how long its longest running client call has run, so that the supervisor
// tells a slow round from a dead or hung worker.
func (h *workerHost) beat(system *actor.ActorSystem, sup *actor.PID, run uint64, name string, watch *atomic.Pointer[watchdog], waiting *atomic.Pointer[waitingFor], every time.Duration, stop <-chan struct{}) {
	building := time.Now()
	defer h.beats.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			// While building there is no watchdog yet: the build is the
			// call that is running (client -1).
			busy, who := time.Since(building), -1
			if w := watch.Load(); w != nil {
				busy, who = w.longest()
			}
			m := &wire.Heartbeat{Run: run, Worker: name, BusyNanos: int64(busy), BusyClient: int64(who)}
			if w := waiting.Load(); w != nil {
				m.WaitingNanos = int64(time.Since(w.since))
				for _, p := range w.peers {
					m.WaitingFor = append(m.WaitingFor, int64(p))
				}
			}
			system.Root.Send(sup, m)
		}
	}
}

// remoteClient is the client actor on a worker: the same shell as in one
// process, answering its worker's host, which gathers the block's answers.
type remoteClient struct {
	client
	k int // its place in the block
}

// remoteStep is a client's part of a worker step.
type remoteStep struct {
	step *step
	in   []optim.Message // ordered by sender; shares payloads with other inboxes
}

func (c *remoteClient) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		ctx.Send(ctx.Parent(), &built{client: c.id, err: c.build()})
	case *remoteStep:
		c.watch.begin(c.id)
		a := c.step(m.step, m.in)
		c.watch.end(c.id)
		ctx.Send(ctx.Parent(), &clientAck{k: c.k, a: a})
	}
}
