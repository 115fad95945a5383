package graph

import (
	"fmt"

	"hgpsim/internal/registry"
)

// Failure is a failure process of `network.failures:` — something that
// happens to nodes or links on top of the topology's edge process: nodes
// going offline (churn, crashes), links cut between groups (partitions),
// messages arriving late (delays). Like a LinkProcess, every method is a
// pure function of its arguments, so every party that asks agrees without
// coordination and runs are deterministic. Embed NoFailure to implement
// only what a process affects. See Failures.
type Failure interface {
	// Validate checks the parameters for n nodes.
	Validate(n int) error
	// Offline reports whether node i is offline at tick: it neither sends
	// nor receives, and its state does not move.
	Offline(seed uint64, i int, tick uint64) bool
	// Cut reports whether the link a→b is cut at tick, whatever the edge
	// process draws.
	Cut(seed uint64, a, b int, tick uint64) bool
	// Delay returns by how many rounds a message a→b sent at tick arrives
	// late (0: in the same round).
	Delay(seed uint64, a, b int, tick uint64) int
	// Breaks reports whether the process can leave the network without
	// strong connectivity for a while (validation says so).
	Breaks() bool
}

// Failures holds the failure processes.
var Failures = registry.New[Failure]("failures", "kind")

// NoFailure is the base of failure processes: nothing happens.
type NoFailure struct{}

// Offline implements Failure.
func (NoFailure) Offline(uint64, int, uint64) bool { return false }

// Cut implements Failure.
func (NoFailure) Cut(uint64, int, int, uint64) bool { return false }

// Delay implements Failure.
func (NoFailure) Delay(uint64, int, int, uint64) int { return 0 }

// Breaks implements Failure.
func (NoFailure) Breaks() bool { return false }

// MaxDelay bounds the delay of a message, in rounds.
const MaxDelay = 1000

// SetFailures validates the failure processes for the network and installs
// them.
func (nw *Network) SetFailures(fs []registry.Choice[Failure]) error {
	nw.Failures = nw.Failures[:0]
	for k, f := range fs {
		if f.Params == nil {
			return fmt.Errorf("failures[%d]: no kind chosen", k)
		}
		if err := f.Params.Validate(nw.N); err != nil {
			return fmt.Errorf("failures[%d] (%s): %w", k, f.Name, err)
		}
		nw.Failures = append(nw.Failures, f.Params)
	}
	return nil
}

// Offline reports whether node i is offline at tick under any failure
// process.
func (nw *Network) Offline(i int, tick uint64) bool {
	for _, f := range nw.Failures {
		if f.Offline(nw.Seed, i, tick) {
			return true
		}
	}
	return false
}

// cut reports whether a failure process takes the link i→j down at tick:
// it is cut, or one of its ends is offline.
func (nw *Network) cut(i, j int, tick uint64) bool {
	for _, f := range nw.Failures {
		if f.Cut(nw.Seed, i, j, tick) || f.Offline(nw.Seed, j, tick) {
			return true
		}
	}
	return false
}

// Delay returns the delay in rounds of a message i→j sent at tick: the
// largest any failure process gives, at most MaxDelay.
func (nw *Network) Delay(i, j int, tick uint64) int {
	d := 0
	for _, f := range nw.Failures {
		d = max(d, f.Delay(nw.Seed, i, j, tick))
	}
	if ld, ok := nw.Process.(linkDelayer); ok {
		d = max(d, ld.LinkDelay(i, j, tick))
	}
	return min(d, MaxDelay)
}

// linkDelayer is a link process that delays messages itself (a trace).
type linkDelayer interface {
	LinkDelay(a, b int, tick uint64) int
	delaysMessages() bool
}

// Delays reports whether some failure process (or the link process)
// delays messages.
func (nw *Network) Delays() bool {
	if ld, ok := nw.Process.(linkDelayer); ok && ld.delaysMessages() {
		return true
	}
	for _, f := range nw.Failures {
		if _, ok := f.(interface{ delays() }); ok {
			return true
		}
	}
	return false
}

// MayDisconnect reports whether some failure process can leave the network
// without strong connectivity for a while.
func (nw *Network) MayDisconnect() bool {
	for _, f := range nw.Failures {
		if f.Breaks() {
			return true
		}
	}
	return false
}
