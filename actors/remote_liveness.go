package actors

import (
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/wire"
)

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

func (s *supervisor) onHeartbeat(m *wire.Heartbeat) {
	if s.remote == nil || m.Run != s.remote.run {
		return
	}
	if w := s.worker(m.Worker); w != nil {
		w.heard, w.answered = time.Now(), true
		w.busy, w.busyClient = time.Duration(m.BusyNanos), int(m.BusyClient)
		w.waiting, w.waitingFor = time.Duration(m.WaitingNanos), m.WaitingFor
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
		if err := r.lostBatch(w, s.timeout); err != nil && s.run != nil {
			s.remoteFailed(ctx, err)
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

// lostBatch says why w has waited for round_timeout for other workers'
// batches: every worker sends its batches of a round before it answers
// the step that opened it, and the supervisor opens the next round only
// after every answer, so a batch still missing after round_timeout was
// lost between two workers that both still reach the supervisor.
func (r *remoteRun) lostBatch(w *workerLink, timeout time.Duration) error {
	if w.waiting < timeout {
		return nil
	}
	var from []string
	for _, k := range w.waitingFor {
		if k >= 0 && k < int64(len(r.workers)) {
			from = append(from, r.workers[k].String())
		}
	}
	return fmt.Errorf("%v: no batch (or parameters) from %s for %v (round_timeout %v), though it was sent: the network between the workers is down",
		w, strings.Join(from, ", "), w.waiting.Round(time.Millisecond), timeout)
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
