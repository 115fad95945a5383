package actors

import (
	"fmt"
	"sync/atomic"
	"time"
)

// callLimit is how many round timeouts one client call may run before it
// counts as hung rather than busy.
const callLimit = 10

// watchdog measures progress for the round timeout. Wall time alone fails
// healthy runs: a large round (10,000 clients, a GC cycle on a 9 GB heap, a
// busy machine) can go a minute without an answer while every client is
// computing. Progress is any message the supervisor handles and any client
// call starting or finishing; a client inside a call is busy, not stalled,
// until that call has run callLimit timeouts.
//
// Times are monotonic nanoseconds since the watchdog was made (time.Since
// of a monotonic reading costs one clock read, time.Now two): a group of
// clients reads the clock about once per call.
type watchdog struct {
	origin time.Time
	last   atomic.Int64   // when the latest progress happened
	since  []atomic.Int64 // per client: when its current call began, 0 when idle
}

func newWatchdog(n int) *watchdog {
	w := &watchdog{origin: time.Now(), since: make([]atomic.Int64, n)}
	w.touch()
	return w
}

// now is the time since origin, at least 1 (0 means idle).
func (w *watchdog) now() int64 { return max(1, int64(time.Since(w.origin))) }

func (w *watchdog) touch() { w.last.Store(w.now()) }

// begin and end bracket a client's call.
func (w *watchdog) begin(client int) {
	now := w.now()
	w.since[client].Store(now)
	w.last.Store(now)
}

func (w *watchdog) end(client int) {
	w.since[client].Store(0)
	w.touch()
}

// pass ends the call of client from (−1: none) and begins one of client to
// (−1: none) at the same instant.
func (w *watchdog) pass(from, to int) {
	now := w.now()
	if from >= 0 {
		w.since[from].Store(0)
	}
	if to >= 0 {
		w.since[to].Store(now)
	}
	w.last.Store(now)
}

// busy reports whether client is inside a call.
func (w *watchdog) busy(client int) bool { return w.since[client].Load() != 0 }

// stalled reports whether the run has made no progress for timeout: nil
// while something happened within timeout or a client is inside a call
// shorter than callLimit timeouts.
func (w *watchdog) stalled(timeout time.Duration) error {
	now := w.now()
	if idle := time.Duration(now - w.last.Load()); idle < timeout {
		return nil
	}
	busy := false
	for i := range w.since {
		began := w.since[i].Load()
		if began == 0 {
			continue
		}
		if d := time.Duration(now - began); d >= callLimit*timeout {
			return fmt.Errorf("client %d has been inside one call for %v (more than %d × round_timeout)", i, d.Round(time.Millisecond), callLimit)
		}
		busy = true
	}
	if busy {
		return nil
	}
	return fmt.Errorf("no progress for %v", timeout)
}

// longest returns how long the longest call now running has run, and its
// client (0 and -1 when no call is running).
func (w *watchdog) longest() (time.Duration, int) {
	now := w.now()
	var d time.Duration
	who := -1
	for i := range w.since {
		if began := w.since[i].Load(); began != 0 && time.Duration(now-began) > d {
			d, who = time.Duration(now-began), i
		}
	}
	return d, who
}
