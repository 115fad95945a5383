package actors

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
	"hgpsim/wire"
)

// blockRun is a worker's share of the rounds of a run: it files what
// reaches its block of clients — from its own clients and from the other
// workers' batches — with an optim.Router of its own, steps the clients
// when the supervisor opens the round and every batch of the round before
// has arrived, and sends every other worker one batch per round.
//
// Filing is the in-process router's, restricted to the block's receivers:
// for every sender in ascending order (the blocks are contiguous and
// ordered, so the batches of the workers before this one, then its own
// clients, then the batches of the workers after it) the router delivers
// the envelopes addressed to the block, through a port of the sender
// opened for the round (mirrors), which realizes its links as the sender
// did. Every inbox is therefore sorted by sender, the late messages kept
// and released as in one process, and the traffic and delivery record of
// each receiver counted once, by its worker.
type blockRun struct {
	run    uint64
	nw     *graph.Network
	me     int          // this worker's place among the peers
	firsts []int        // block k is [firsts[k], firsts[k+1])
	peers  []*actor.PID // the other workers' hosts; nil at me
	names  []string     // the peers' addresses, for errors

	router  *optim.Router
	mirrors []*optim.Port // by sender, made when first needed
	rec     *optim.DeliveryRecord

	spec    *optim.PhaseSpec
	epoch   uint64
	step    int                         // the step the clients are working on (or last did)
	opened  uint64                      // tick of the round opened in step
	pending *wire.WorkerStep            // a step waiting for batches
	waiting *atomic.Pointer[waitingFor] // since when, and for whom, for the heartbeat
	batches map[batchKey][]*wire.PeerBatch

	acks   []ack         // by client of the block, for the step running
	nacks  int           // clients that have answered the step
	ports  []*optim.Port // the block's ports of the round opened in step
	eval   bool
	filed  optim.Traffic // what was filed for the step running
	beyond int64         // envelopes of the round opened addressed outside the network
	sent   [2]int64      // batches and bytes sent to other workers in the step

	// At an evaluation every other worker sends worker 0 its clients'
	// parameter vectors, and worker 0 holds its answer until it has them
	// all and has put the consensus distance in it: the supervisor then
	// receives one number in place of n vectors of the model's size.
	params map[batchKey][]*wire.PeerParams // worker 0: by sender
	held   *wire.WorkerAck                 // worker 0: the evaluation's answer
	own    [][]float64                     // worker 0: its clients' vectors (views) at the held evaluation
}

// waitingFor is a step that waits for other workers' batches, or worker
// 0's answer to an evaluation for their parameters.
type waitingFor struct {
	since time.Time
	peers []int
}

type batchKey struct {
	epoch uint64
	step  int
}

func newBlockRun(run uint64, nw *graph.Network, me int, firsts []int, names []string, waiting *atomic.Pointer[waitingFor]) *blockRun {
	b := &blockRun{run: run, nw: nw, me: me, firsts: firsts, names: names, router: optim.NewRouter(nw), waiting: waiting,
		mirrors: make([]*optim.Port, nw.N), batches: map[batchKey][]*wire.PeerBatch{},
		params: map[batchKey][]*wire.PeerParams{}, step: -1}
	b.peers = make([]*actor.PID, len(names))
	for k, a := range names {
		if k != me {
			b.peers[k] = actor.NewPID(a, hostID)
		}
	}
	size := firsts[me+1] - firsts[me]
	b.acks, b.ports = make([]ack, size), make([]*optim.Port, size)
	return b
}

func (b *blockRun) first() int { return b.firsts[b.me] }
func (b *blockRun) last() int  { return b.firsts[b.me+1] }

// peerName names worker k and its clients, for errors.
func (b *blockRun) peerName(k int) string {
	w := &workerLink{addr: b.names[k], first: b.firsts[k], last: b.firsts[k+1]}
	return w.String()
}

// peerOf returns the place of the worker whose host is pid, or -1.
func (b *blockRun) peerOf(pid *actor.PID) int {
	for k, p := range b.peers {
		if p != nil && p.Equal(pid) {
			return k
		}
	}
	return -1
}

// onStep takes the supervisor's step: at step 0 it enters the phase,
// otherwise it waits for the batches of the round before.
func (h *workerHost) onStep(ctx actor.Context, m *wire.WorkerStep) {
	b := h.block
	if m.Step == 0 {
		if err := b.enter(m); err != nil {
			h.stepFailed(ctx, m, h.block.first(), -1, err)
			return
		}
	}
	b.pending = m
	h.tryStep(ctx)
}

// enter starts a phase (or a part of one) on the worker's router, as the
// sequential driver does.
func (b *blockRun) enter(m *wire.WorkerStep) error {
	spec, err := m.OptimSpec()
	if err != nil {
		return err
	}
	if spec == nil {
		return errors.New("step 0 without its phase")
	}
	late, err := m.OptimLate()
	if err != nil {
		return err
	}
	switch {
	case late != nil:
		for _, l := range late {
			if l.To < b.first() || l.To >= b.last() {
				return fmt.Errorf("a late message for client %d, which this worker does not host", l.To)
			}
		}
		if err := b.router.Restore(late); err != nil {
			return err
		}
	case spec.Offset == 0 && spec.Rounds > 0:
		b.router.Close(&optim.Traffic{}) // nothing of a failed phase lingers
	}
	if spec.Track {
		switch {
		case !m.ContinueRecord:
			b.rec = optim.NewDeliveryRecord(b.nw.N)
		case len(m.Record) > 0:
			// A part resumed from a checkpoint: the record so far comes
			// with the step, as this worker never ran the parts before.
			b.rec = optim.NewDeliveryRecord(b.nw.N)
			first, last, err := wire.ApplyRecordColumns(b.rec, m.Record)
			if err != nil {
				return err
			}
			if first != b.first() || last != b.last() {
				return fmt.Errorf("the delivery record of clients %d–%d, for a worker of clients %d–%d", first, last-1, b.first(), b.last()-1)
			}
		case b.rec == nil:
			return errors.New("asked to continue a delivery record this worker does not have")
		}
	}
	for k := range b.batches {
		if k.epoch != m.Epoch {
			delete(b.batches, k)
		}
	}
	for k := range b.params {
		if k.epoch != m.Epoch {
			delete(b.params, k)
		}
	}
	b.held, b.own = nil, nil // of a failed phase
	b.spec, b.epoch = spec, m.Epoch
	return nil
}

// tracked is the delivery record of the running phase (nil untracked).
func (b *blockRun) tracked() *optim.DeliveryRecord {
	if b.spec != nil && b.spec.Track {
		return b.rec
	}
	return nil
}

// onBatch keeps another worker's batch until its round is filed.
func (h *workerHost) onBatch(ctx actor.Context, m *wire.PeerBatch) {
	b := h.block
	if b == nil || m.Run != b.run || m.From < 0 || int(m.From) >= len(b.peers) || int(m.From) == b.me {
		return
	}
	if keepFrom(b, b.batches, m.Epoch, int(m.Step), int(m.From), m) {
		h.tryStep(ctx)
	}
}

// keepFrom files v, sent by worker from for the given epoch and step, in
// byStep until its step is complete; false for a message of a phase or
// round already over (a failed one), which is dropped.
func keepFrom[T any](b *blockRun, byStep map[batchKey][]T, epoch uint64, step, from int, v T) bool {
	if epoch < b.epoch || (epoch == b.epoch && step < b.step) {
		return false
	}
	k := batchKey{epoch, step}
	got := byStep[k]
	if got == nil {
		got = make([]T, len(b.peers))
		byStep[k] = got
	}
	got[from] = v
	return true
}

// waitFor records for the heartbeat that the worker waits for the other
// workers missing, since the wait began; nil: it waits for none.
func (b *blockRun) waitFor(missing []int) {
	if missing == nil {
		b.waiting.Store(nil)
		return
	}
	since := time.Now()
	if w := b.waiting.Load(); w != nil {
		since = w.since
	}
	b.waiting.Store(&waitingFor{since: since, peers: missing})
}

// tryStep steps the clients once the supervisor has opened the round and
// every other worker's batch of the round before is in.
func (h *workerHost) tryStep(ctx actor.Context) {
	b := h.block
	m := b.pending
	if m == nil || m.Epoch != b.epoch {
		return
	}
	n := int(m.Step)
	if n > 0 {
		k := batchKey{m.Epoch, n - 1}
		got := b.batches[k]
		var missing []int
		for p := range b.peers {
			if p != b.me && (got == nil || got[p] == nil) {
				missing = append(missing, p)
			}
		}
		b.waitFor(missing)
		if missing != nil {
			return
		}
		delete(b.batches, k)
		if err := b.file(n-1, got); err != nil {
			b.pending = nil // the run has failed; no batch completes this step
			h.stepFailed(ctx, m, b.first(), b.spec.Offset+n-1, err)
			return
		}
	}
	b.pending = nil
	b.step, b.eval, b.opened, b.nacks = n, m.Eval, m.Tick, 0
	st := &step{epoch: m.Epoch, step: n, spec: b.spec, tick: m.Tick, eval: m.Eval}
	inbox := b.router.Inboxes()
	for k, pid := range h.clients {
		var in []optim.Message
		if n > 0 {
			in = inbox[b.first()+k]
		}
		ctx.Send(pid, &remoteStep{step: st, in: in})
	}
}

// file delivers round r — opened in the step before — into the block's
// inboxes: senders in ascending order, through their mirrors.
func (b *blockRun) file(r int, batches []*wire.PeerBatch) error {
	spec := b.spec
	rec := b.tracked()
	b.router.Open(b.opened, spec.LastRound(r), rec)
	first, last := b.first(), b.last()
	for p := range b.peers {
		if p == b.me {
			for k, port := range b.ports {
				if port == nil {
					continue
				}
				mirror := b.mirror(first+k, spec.Name, spec.Offset+r)
				for _, e := range port.Envelopes() {
					if e.To >= first && e.To < last {
						mirror.Post(e.To, e.Weight, e.Pushed, e.Payload)
					}
				}
				b.router.Deliver(first+k, mirror, &b.filed, rec)
			}
			clear(b.ports)
			continue
		}
		boxes, err := batches[p].OptimOutboxes()
		if err != nil {
			return fmt.Errorf("the batch of %s: %w", b.peerName(p), err)
		}
		for _, o := range boxes {
			if o.From < b.firsts[p] || o.From >= b.firsts[p+1] {
				return fmt.Errorf("the batch of %s holds a message from client %d, which it does not host", b.peerName(p), o.From)
			}
			mirror := b.mirror(o.From, spec.Name, spec.Offset+r)
			for _, e := range o.Envelopes {
				if e.To < first || e.To >= last {
					return fmt.Errorf("the batch of %s holds a message for client %d, which this worker does not host", b.peerName(p), e.To)
				}
				mirror.Post(e.To, e.Weight, e.Pushed, e.Payload)
			}
			b.router.Deliver(o.From, mirror, &b.filed, rec)
		}
	}
	// Envelopes addressed outside the network were dropped by their
	// sender's worker; they count with the round they were sent in.
	b.filed.Dropped += b.beyond
	b.beyond = 0
	return nil
}

// mirror returns sender i's port opened for round index at the tick of
// the round being filed: its realized links decide what is delivered.
func (b *blockRun) mirror(i int, phase string, index int) *optim.Port {
	p := b.mirrors[i]
	if p == nil {
		p = optim.NewPort(b.nw, i)
		b.mirrors[i] = p
	}
	p.Open(phase, index, b.opened)
	return p
}
