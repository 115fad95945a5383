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
type watchdog struct {
	last  atomic.Int64   // unix nanoseconds of the latest progress
	since []atomic.Int64 // per client: when its current call began, 0 when idle
}

func newWatchdog(n int) *watchdog {
	w := &watchdog{since: make([]atomic.Int64, n)}
	w.touch()
	return w
}

func (w *watchdog) touch() { w.last.Store(time.Now().UnixNano()) }

// begin and end bracket a client's call.
func (w *watchdog) begin(client int) {
	now := time.Now().UnixNano()
	w.since[client].Store(now)
	w.last.Store(now)
}

func (w *watchdog) end(client int) {
	w.since[client].Store(0)
	w.touch()
}

// busy reports whether client is inside a call.
func (w *watchdog) busy(client int) bool { return w.since[client].Load() != 0 }

// stalled reports whether the run has made no progress for timeout: nil
// while something happened within timeout or a client is inside a call
// shorter than callLimit timeouts.
func (w *watchdog) stalled(timeout time.Duration) error {
	now := time.Now().UnixNano()
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
	now := time.Now().UnixNano()
	var d time.Duration
	who := -1
	for i := range w.since {
		if began := w.since[i].Load(); began != 0 && time.Duration(now-began) > d {
			d, who = time.Duration(now-began), i
		}
	}
	return d, who
}
