package optim

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"

	"hgpsim/graph"
	"hgpsim/internal/vec"
)

// Kind says what a payload carries, so that a wrapper (a straggler, a
// byzantine client, a delaying link) can act on any algorithm's messages
// without knowing its private layout.
type Kind uint8

// Payload kinds.
const (
	// KindModel is model parameters: the z of push-sum with its weight ω in
	// Payload.Mass, or the x, y or θ a server broadcasts or a client
	// uploads.
	KindModel Kind = iota + 1
	// KindDual is the adjoint vectors of hyper-gradient estimation (u, and
	// w for VR-HGP).
	KindDual
	// KindUpdate is what a client reports to a server other than its model:
	// gradients, hyper-gradient pieces, Hessian-vector products, sketches.
	KindUpdate
	// KindControl is small bookkeeping data (indices, counters).
	KindControl
)

func (k Kind) String() string {
	switch k {
	case KindModel:
		return "model"
	case KindDual:
		return "dual"
	case KindUpdate:
		return "update"
	case KindControl:
		return "control"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Payload is what one message carries: a vector in float64 (Vec) or in
// float32 (Vec32), never both; behaviours written over an element type F
// use NewPayload and VecOf. The vector is read-only once sent and stays
// valid until the sender's next-but-one round of the same phase, so
// behaviours double-buffer their payloads and nothing is copied per
// receiver.
//
// Like the other plain-data types a driver moves between processes
// (Message, Envelope, Stats, Result, PhaseSpec), its wire tags number its
// fields for the codec of package wire.
type Payload struct {
	Kind  Kind      `wire:"1"`
	Vec   []float64 `wire:"2"`
	Mass  float64   `wire:"3"` // push-sum weight ω travelling with a KindModel z; 0 otherwise
	Vec32 []float32 `wire:"4"` // the vector of a float32 behaviour, in place of Vec
}

// Message is one delivery: the sender's payload with its header.
type Message struct {
	From   int     `wire:"1"` // sender
	Round  int     `wire:"2"` // round of the phase in which it was sent
	Phase  string  `wire:"3"` // phase in which it was sent
	Weight float64 `wire:"4"`
	// Weight is the push weight p_{From→receiver}(δ_From) of Eq. (3) for a
	// message sent with Outbox.Push, 0 for one sent with Outbox.Send.
	Payload `wire:"5"`
}

// Round is what a behaviour knows about the round it is in.
type Round struct {
	Phase string
	Index int // 0-based round of the phase
	Self  int // the client's index
	// Links lists the receivers j whose link Self→j is up this round,
	// ascending, Self included (a client always reaches itself).
	Links []int
	// Weights are the push weights p_{Self,j}(δ_Self) of Eq. (3) over
	// Links, what Push uses when it sends to all of them.
	Weights []float64
	// Offline is set when a failure process has taken the client offline
	// this round: it neither sends nor receives, and drivers do not step
	// its behaviour.
	Offline bool
	// Reinit is set in the round a client comes back from a crash that
	// lost its state: it restarts from its initial state before it sends
	// (see Reinitializer).
	Reinit bool
	// Lockstep is set by a driver that runs rounds one after the other:
	// every receiver is done with a round's payloads before the next round
	// begins (a delayed message is a copy). A behaviour may then write,
	// from this round's Premix on, into the payload it sent in the round
	// before, instead of keeping it one round more.
	Lockstep bool
}

// Outbox is how a behaviour sends in one round; Push and Send below are
// the usual ways to use it. Messages to a node whose link is down are
// dropped by the network (and counted as drops). A fault wrapper implements
// Outbox around the driver's to change what a client sends without knowing
// the algorithm.
type Outbox interface {
	// Weights returns the push weights for the receivers to, aligned with
	// to, splitting the sender's whole mass: the network's rule of Eq. (3)
	// over the realized links when to is all of them, and otherwise the
	// network's weights for the others with the rest kept by the sender
	// (to must then include the sender). The slice is valid until the next
	// call.
	Weights(to []int) []float64
	// Post addresses one message to node to. pushed marks a push-sum
	// message whose push weight is weight.
	Post(to int, weight float64, pushed bool, p Payload)
}

// Push sends p to every node of to with the push weights out.Weights(to)
// and returns them.
func Push(out Outbox, to []int, p Payload) []float64 {
	w := out.Weights(to)
	for k, j := range to {
		out.Post(j, w[k], true, p)
	}
	return w
}

// Send sends p to every node of to, without a push weight.
func Send(out Outbox, to []int, p Payload) {
	for _, j := range to {
		out.Post(j, 0, false, p)
	}
}

// Behaviour is one client's part in one phase: a synchronous state
// machine, like etcd raft's RawNode, with no goroutines, clocks or shared
// randomness. Round by round the driver calls Send, delivers what every
// client sent over the links that are up, and calls Receive with the
// deliveries sorted by sender. An error stops the run, naming client,
// phase and round.
type Behaviour interface {
	Send(r *Round, out Outbox) error
	Receive(r *Round, in []Message) error
}

// Stats is what a client reports when the driver evaluates a round.
type Stats struct {
	TrainLoss float64 `wire:"1"`
	TrainAcc  float64 `wire:"2"`
	ValLoss   float64 `wire:"3"`
	ValAcc    float64 `wire:"4"`
	TestLoss  float64 `wire:"5"`
	TestAcc   float64 `wire:"6"`
	OuterLoss float64 `wire:"7"` // F_i(x_i, λ_i) on the outer data (0 without it)
	// TrainN, ValN and TestN are the sizes of the splits the losses and
	// accuracies are over, for means across clients; a client that
	// evaluates nothing on a split reports 0 and is left out of its mean.
	TrainN int `wire:"12"`
	ValN   int `wire:"8"`
	TestN  int `wire:"9"`
	// X is the client's debiased parameter vector, a read-only view used for
	// the consensus distance; valid until the client's next Receive. Over
	// worker processes it stays with the workers, and the distance reaches
	// the sink in RoundEvent.Consensus.
	X []float64 `wire:"10"`
	// X32 is X of a client computing in float32, in its place (a view
	// likewise, not widened: at an evaluation every client's would be
	// live at once). HasX tells whether either is set.
	X32 []float32 `wire:"14"`
	// Hyper is a hyper-gradient estimator's current estimate (a fresh slice).
	Hyper []float64 `wire:"11"`
	// Weight is a push-sum client's weight ω_i (0 for other clients). Its
	// collapse is how push-sum diverges on bursty networks: a gradient
	// step on z moves x = z/ω by the step over ω.
	Weight float64 `wire:"13"`
}

// HasX reports whether the stats carry the client's parameters (X or X32).
func (s *Stats) HasX() bool { return s.X != nil || s.X32 != nil }

// Observer is implemented by behaviours that can be evaluated.
type Observer interface {
	Observe() Stats
}

// Result is what a client reports at the end of a phase, plain data a
// driver can move between processes.
type Result struct {
	// Data is the algorithm's own result type, encoded by PutResult and
	// read by ResultOf: only the algorithm (and whoever reads its results
	// through its package) knows the type.
	Data []byte `wire:"5"`
	// State is a client's saved state (PhaseSaveState only).
	State []byte `wire:"3"`
	// Stateless names the type of a client that cannot save its state
	// (PhaseSaveState only).
	Stateless string `wire:"4"`
}

// Resulter is implemented by behaviours that report a Result when their
// phase ends.
type Resulter interface {
	Result() Result
}

// Traffic counts what crossed the network. Self-deliveries are not
// traffic. A message costs 8 bytes per element of a float64 vector (4 of a
// float32 one), 8 for its header and, when pushed, 8 for its push weight
// with the mass it carries.
type Traffic struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	Dropped  int64 `json:"dropped,omitempty"` // addressed over a link that was down
}

// Add accumulates o into t.
func (t *Traffic) Add(o Traffic) {
	t.Messages += o.Messages
	t.Bytes += o.Bytes
	t.Dropped += o.Dropped
}

func messageBytes(e *Envelope) int64 {
	b := int64(8*(len(e.Vec)+1) + 4*len(e.Vec32))
	if e.Pushed {
		b += 8
	}
	return b
}

// Envelope is one addressed message as a client's port records it.
type Envelope struct {
	To      int     `wire:"1"`
	Weight  float64 `wire:"2"`
	Pushed  bool    `wire:"3"` // sent with Push: carries a push weight and mass
	Payload `wire:"4"`
}

// Port is one client's network interface, shared by both drivers: each
// round it realizes the client's links, implements Outbox for the
// behaviour, and keeps what was addressed for the router. Its buffers are
// reused round after round, so a steady-state round allocates nothing.
type Port struct {
	net     *graph.Network
	self    int
	tick    uint64
	round   Round
	out     []Envelope
	weights []float64 // Weights' result for a subset of the links
}

// NewPort returns client self's port on nw.
func NewPort(nw *graph.Network, self int) *Port {
	return &Port{net: nw, self: self}
}

// Open realizes the links of round index of phase at tick and clears the
// outbox. It returns the Round to hand to the behaviour.
func (p *Port) Open(phase string, index int, tick uint64) *Round {
	p.round.Phase, p.round.Index, p.round.Self = phase, index, p.self
	p.tick = tick
	p.round.Offline = len(p.net.Failures) > 0 && p.net.Offline(p.self, tick)
	p.round.Reinit = len(p.net.Failures) > 0 && !p.round.Offline && p.net.Reinitializes(p.self, tick)
	p.round.Links = p.net.Realize(p.self, tick, p.round.Links)
	p.round.Weights = p.net.PushWeights(p.self, p.round.Links, p.round.Weights)
	clear(p.out) // the last round's payloads are not kept alive by the port
	p.out = p.out[:0]
	return &p.round
}

// Round returns the round opened last.
func (p *Port) Round() *Round { return &p.round }

// Envelopes returns what the behaviour addressed since Open.
func (p *Port) Envelopes() []Envelope { return p.out }

// Weights implements Outbox.
func (p *Port) Weights(to []int) []float64 {
	if sameInts(to, p.round.Links) {
		return p.round.Weights
	}
	p.weights = p.net.PushWeights(p.self, to, p.weights)
	p.restWeights(to)
	return p.weights
}

// Post implements Outbox.
func (p *Port) Post(to int, weight float64, pushed bool, pl Payload) {
	p.out = append(p.out, Envelope{To: to, Weight: weight, Pushed: pushed, Payload: pl})
}

// restWeights recomputes the push weights for a strict subset of the
// realized links: uniform over the subset under the uniform rule (Eq. 3
// with δ restricted to to), and with fixed mixing weights the network's
// weight for every other receiver and the remainder for the sender, so
// that the weights sum to 1 and no mass is lost.
func (p *Port) restWeights(to []int) {
	if p.net.Mixing == nil {
		w := 1 / float64(len(to))
		for k := range to {
			p.weights[k] = w
		}
		return
	}
	row := p.net.Mixing[p.self]
	self, rest := -1, 1.0
	for k, j := range to {
		if j == p.self {
			self = k
			continue
		}
		p.weights[k] = row[j]
		rest -= row[j]
	}
	if self >= 0 {
		p.weights[self] = rest
	}
}

// Up reports whether the link to j is up this round.
func (p *Port) Up(j int) bool {
	links := p.round.Links
	k := sort.SearchInts(links, j)
	return k < len(links) && links[k] == j
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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

// AllFinite reports whether every coordinate of v is finite.
func AllFinite[F vec.Float](v []F) bool {
	if vec.Is64[F]() {
		return allFinite64(vec.View[float64](v))
	}
	// x − x is 0 for a finite x and NaN otherwise; four sums, so that no
	// chain of additions bounds the loop.
	var b0, b1, b2, b3 F
	i := 0
	for ; i+4 <= len(v); i += 4 {
		b0 += v[i] - v[i]
		b1 += v[i+1] - v[i+1]
		b2 += v[i+2] - v[i+2]
		b3 += v[i+3] - v[i+3]
	}
	for ; i < len(v); i++ {
		b0 += v[i] - v[i]
	}
	return b0+b1+b2+b3 == 0
}

func allFinite64(v []float64) bool {
	// A non-finite coordinate makes Σv² non-finite, so a finite Σv² (one
	// vectorized pass) proves every coordinate finite; only an overflow of
	// the sum (some |v_k| > 1e154) needs the coordinate-wise check.
	if s := floats.Dot(v, v); !math.IsNaN(s) && !math.IsInf(s, 0) {
		return true
	}
	for _, a := range v {
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return false
		}
	}
	return true
}
