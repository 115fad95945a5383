package optim

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Message is one delivery over a realized link.
type Message struct {
	From   int       // sender index
	Weight float64   // push weight p_{From,To}(δ_From) of Eq. (3)
	Data   []float64 // the sender's payload, shared by all its receivers; read-only
}

// Behaviour is one client's part in one phase (see the package doc for the
// round protocol).
type Behaviour interface {
	// Send returns the vector pushed to every realized receiver in recv
	// (weights[k] is the push weight to recv[k]), or nil to send nothing.
	Send(round int, recv []int, weights []float64) []float64
	// Receive consumes what arrived this round, ordered by sender. An error
	// (for instance a non-finite state) stops the run.
	Receive(round int, in []Message) error
}

// Stats is what a client reports when the driver evaluates a round.
type Stats struct {
	TrainLoss, TrainAcc float64
	ValLoss, ValAcc     float64
	TestLoss, TestAcc   float64
	OuterLoss           float64 // F_i(x_i, λ_i) on the outer data (0 without it)
	// X is the client's debiased parameter vector, a read-only view used for
	// the consensus distance; valid until the client's next Receive.
	X []float64
	// Hyper is a hyper-gradient estimator's current estimate (a fresh slice).
	Hyper []float64
}

// Observer is implemented by behaviours that can be evaluated.
type Observer interface {
	Observe() Stats
}

// Phase is a number of rounds of one behaviour per client.
type Phase struct {
	Name      string
	Rounds    int
	Clients   []Behaviour
	EvalEvery int // evaluate every EvalEvery rounds (0: only after the last round)
}

// ShouldEval reports whether round r (0-based) closes with an evaluation.
func (p *Phase) ShouldEval(r int) bool {
	if r == p.Rounds-1 {
		return true
	}
	return p.EvalEvery > 0 && (r+1)%p.EvalEvery == 0
}

// Traffic counts what crossed the network. Self-deliveries are not traffic.
// Bytes count 8 per float64 of payload plus 8 for the push weight.
type Traffic struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// Add accumulates o into t.
func (t *Traffic) Add(o Traffic) {
	t.Messages += o.Messages
	t.Bytes += o.Bytes
}

// Count adds the deliveries of one payload of length dim to the receivers in
// recv, skipping the sender's own self-loop.
func (t *Traffic) Count(from int, recv []int, dim int) {
	for _, j := range recv {
		if j != from {
			t.Messages++
			t.Bytes += int64(8 * (dim + 1))
		}
	}
}

// RoundEvent is what a driver reports at an evaluated round.
type RoundEvent struct {
	Phase   string
	Round   int     // 0-based round within the phase
	Traffic Traffic // since the previous event of the same phase
	Clients []Stats // indexed by client; nil entries for non-observers
}

// Sink receives round events in round order. The Clients slice and the X
// vectors inside it are only valid during the call.
type Sink func(RoundEvent) error

// Driver runs phases. Implementations keep a communication tick that
// continues across phases, so that every round of a run sees a fresh edge
// realization.
type Driver interface {
	Run(ctx context.Context, p *Phase, sink Sink) (Traffic, error)
}

// ClientError names the client, phase and round where a run failed.
type ClientError struct {
	Client int
	Phase  string
	Round  int
	Err    error
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("client %d, phase %s, round %d: %v", e.Client, e.Phase, e.Round, e.Err)
}

func (e *ClientError) Unwrap() error { return e.Err }

// ErrNonFinite reports a NaN or Inf in a client's state or losses.
var ErrNonFinite = errors.New("non-finite value (NaN or Inf)")

func allFinite(v []float64) bool {
	for _, a := range v {
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return false
		}
	}
	return true
}
