package actors

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"hgpsim/optim"
	"hgpsim/wire"
)

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
