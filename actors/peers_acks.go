package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"hgpsim/internal/vec"
	"hgpsim/optim"
	"hgpsim/wire"
)

// clientAck is a client's answer to its part of a worker step.
type clientAck struct {
	k int // the client's place in the block
	a *ack
}

// onClientAck collects the block's answers; after the last it sends the
// round's batches to the other workers and the step's answer to the
// supervisor.
func (h *workerHost) onClientAck(ctx actor.Context, m *clientAck) {
	b := h.block
	if b == nil || m.a.epoch != b.epoch || m.a.step != b.step {
		return
	}
	b.acks[m.k] = *m.a
	b.nacks++
	if b.nacks < len(b.acks) {
		return
	}
	out := wire.NewWorkerAck(b.run, b.epoch, b.step, b.me)
	for k := range b.acks {
		if a := &b.acks[k]; a.err != nil {
			out.SetError(a.client, a.round, a.err)
			ctx.Send(h.sup, out)
			return
		}
	}
	spec := b.spec
	if b.step < spec.Rounds {
		out.Links = wire.DigestStart
		for k := range b.acks {
			p := b.acks[k].port
			b.ports[k] = p
			if p != nil {
				out.Links = wire.LinksDigest(out.Links, p.Round().Self, p.Round().Links)
				for _, e := range p.Envelopes() {
					if e.To < 0 || e.To >= b.nw.N {
						b.beyond++
					}
				}
			}
		}
		for p, pid := range b.peers {
			if pid == nil {
				continue
			}
			batch := wire.NewPeerBatch(b.run, b.epoch, b.step, b.me, b.ports, b.firsts[p], b.firsts[p+1])
			b.sent[0]++
			b.sent[1] += int64(proto.Size(batch))
			ctx.Send(pid, batch)
		}
	}
	if b.eval {
		xs := make([][]float64, len(b.acks))
		for k := range b.acks {
			st := b.acks[k].stats
			xs[k] = st.X
			if st.X32 != nil {
				// The parameters travel to worker 0 in float64, as the
				// consensus distance reads them (widened exactly).
				xs[k] = make([]float64, len(st.X32))
				vec.Widen(xs[k], st.X32)
			}
			st.X, st.X32 = nil, nil
			out.AddStats(&st)
		}
		if b.me == 0 {
			// Views, not copies: a client's X stays valid until its next
			// step, which the supervisor sends only after this answer.
			b.own = xs
		} else {
			params := wire.NewPeerParams(b.run, b.epoch, b.step, b.me, xs)
			b.sent[1] += int64(proto.Size(params))
			ctx.Send(b.peers[0], params)
		}
	}
	var lost optim.Traffic
	if b.step == spec.Rounds {
		for k := range b.acks {
			out.AddResult(&b.acks[k].result)
		}
		switch {
		case spec.Continued:
			out.SetLate(b.router.Late())
		case spec.Rounds > 0:
			b.router.Close(&lost)
		}
		if rec := b.tracked(); rec != nil {
			out.Record = wire.NewRecordColumns(rec, b.first(), b.last())
		}
	}
	out.Traffic = []int64{b.filed.Messages, b.filed.Bytes, b.filed.Dropped, lost.Dropped, b.sent[0], b.sent[1]}
	b.filed, b.sent = optim.Traffic{}, [2]int64{}
	for k := range b.acks {
		b.acks[k] = ack{}
	}
	if b.eval && b.me == 0 {
		b.held = out
		h.tryConsensus(ctx)
		return
	}
	ctx.Send(h.sup, out)
}

// onParams keeps another worker's parameter vectors until worker 0's
// clients have evaluated the same step.
func (h *workerHost) onParams(ctx actor.Context, m *wire.PeerParams) {
	b := h.block
	if b == nil || b.me != 0 || m.Run != b.run || m.From <= 0 || int(m.From) >= len(b.peers) {
		return
	}
	if keepFrom(b, b.params, m.Epoch, int(m.Step), int(m.From), m) {
		h.tryConsensus(ctx)
	}
}

// tryConsensus completes worker 0's held answer to an evaluation once
// every other worker's vectors are in: it computes the consensus distance
// over all the run's clients in client order, as optim.Summarize does in
// one process, so the bits are the same.
func (h *workerHost) tryConsensus(ctx actor.Context) {
	b := h.block
	out := b.held
	if out == nil {
		return
	}
	k := batchKey{b.epoch, b.step}
	got := b.params[k]
	var missing []int
	for p := 1; p < len(b.peers); p++ {
		if got == nil || got[p] == nil {
			missing = append(missing, p)
		}
	}
	// Every worker sends its parameters before it answers the step, so
	// the heartbeat's wait lets the supervisor tell a lost message
	// (round_timeout after the others answered) from a slow one.
	b.waitFor(missing)
	if missing != nil {
		return
	}
	delete(b.params, k)
	b.held = nil
	stats := make([]optim.Stats, b.nw.N)
	for i, x := range b.own {
		stats[b.firsts[0]+i].X = x
	}
	b.own = nil
	for p := 1; p < len(b.peers); p++ {
		xs, err := got[p].Vectors(b.firsts[p+1] - b.firsts[p])
		if err != nil {
			fail := wire.NewWorkerAck(b.run, b.epoch, b.step, b.me)
			fail.SetError(-1, -1, fmt.Errorf("the parameters from %s: %w", b.peerName(p), err))
			ctx.Send(h.sup, fail)
			return
		}
		for i, x := range xs {
			stats[b.firsts[p]+i].X = x
		}
	}
	c := optim.ConsensusOf(stats)
	out.Consensus, out.XClients = c.Value, int64(c.Clients)
	ctx.Send(h.sup, out)
}

// stepFailed answers a step the worker could not run.
func (h *workerHost) stepFailed(ctx actor.Context, m *wire.WorkerStep, client, round int, err error) {
	out := wire.NewWorkerAck(h.block.run, m.Epoch, int(m.Step), h.block.me)
	out.SetError(client, round, fmt.Errorf("step %d: %w", m.Step, err))
	ctx.Send(h.sup, out)
}

// peerLost tells the supervisor that the connection to another worker is
// gone: its batches would never come.
func (h *workerHost) peerLost(ctx actor.Context, k int, why string) {
	b := h.block
	out := wire.NewWorkerAck(b.run, b.epoch, b.step, b.me)
	out.SetError(-1, -1, fmt.Errorf("lost the connection to %s (%s): its process exited, or the network between the two failed", b.peerName(k), why))
	ctx.Send(h.sup, out)
}
