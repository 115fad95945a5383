package actors

import (
	"strings"
	"testing"
	"time"
)

// TestWatchdogMeasuresProgress checks the three verdicts of the round
// timeout: recent progress, a client still computing (not stalled until
// its call has run callLimit timeouts) and silence with nobody computing.
func TestWatchdogMeasuresProgress(t *testing.T) {
	const timeout = 50 * time.Millisecond // a hung call: 500 ms, far above a scheduling stall
	w := newWatchdog(4)
	if err := w.stalled(timeout); err != nil {
		t.Fatalf("just after progress: %v", err)
	}
	time.Sleep(2 * timeout)
	err := w.stalled(timeout)
	if err == nil || !strings.Contains(err.Error(), "no progress") {
		t.Fatalf("silent with no client computing: got %v, want no progress", err)
	}

	w.begin(2)
	time.Sleep(2 * timeout)
	if err := w.stalled(timeout); err != nil {
		t.Fatalf("client 2 computing for 2 timeouts: %v", err)
	}
	time.Sleep(callLimit * timeout)
	err = w.stalled(timeout)
	if err == nil || !strings.Contains(err.Error(), "client 2 has been inside one call") {
		t.Fatalf("client 2 inside one call for over %d timeouts: got %v", callLimit, err)
	}

	w.end(2)
	if err := w.stalled(timeout); err != nil {
		t.Fatalf("just after the call ended: %v", err)
	}
}
