package wire

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"hgpsim/optim"
)

// Marshal encodes m deterministically: map entries are written in key
// order, so the same value always gives the same bytes. Use it (or
// proto.MarshalOptions{Deterministic: true}) wherever bytes are compared,
// hashed or counted.
func Marshal(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// vec is the decoding rule for vectors: zero-length means nil.
func vec(v []float64) []float64 {
	if len(v) == 0 {
		return nil
	}
	return v
}

// toInt converts a decoded integer to Go's int, failing where int is
// narrower than 64 bits and the value does not fit.
func toInt(v int64, what string) (int, error) {
	if int64(int(v)) != v {
		return 0, fmt.Errorf("wire: %s %d does not fit an int", what, v)
	}
	return int(v), nil
}

func fromVectors(m map[string][]float64) map[string]*Vector {
	if m == nil {
		return nil
	}
	out := make(map[string]*Vector, len(m))
	for k, v := range m {
		out[k] = &Vector{V: v}
	}
	return out
}

func optimVectors(m map[string]*Vector) map[string][]float64 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string][]float64, len(m))
	for k, v := range m {
		out[k] = vec(v.GetV())
	}
	return out
}

func optimValues(m map[string]float64) map[string]float64 {
	if len(m) == 0 {
		return nil
	}
	return m
}

// FromPayload returns p as a wire message. The message shares p.Vec.
func FromPayload(p optim.Payload) *Payload {
	return &Payload{Kind: Kind(p.Kind), Vec: p.Vec, Mass: p.Mass}
}

// Optim returns m as an optim.Payload sharing m's vector (nil when it is
// empty). A nil m gives the zero Payload. It fails when the kind does not
// fit optim.Kind (a uint8).
func (m *Payload) Optim() (optim.Payload, error) {
	k := m.GetKind()
	if k < 0 || k > math.MaxUint8 {
		return optim.Payload{}, fmt.Errorf("wire: payload kind %d is not an optim.Kind", int32(k))
	}
	return optim.Payload{Kind: optim.Kind(k), Vec: vec(m.GetVec()), Mass: m.GetMass()}, nil
}

// FromMessage returns m as a wire message sharing m's vector.
func FromMessage(m optim.Message) *Message {
	return &Message{From: int64(m.From), Round: int64(m.Round), Phase: m.Phase, Weight: m.Weight, Payload: FromPayload(m.Payload)}
}

// Optim returns m as an optim.Message sharing m's vector (see
// Payload.Optim). A nil m gives the zero Message.
func (m *Message) Optim() (optim.Message, error) {
	p, err := m.GetPayload().Optim()
	if err != nil {
		return optim.Message{}, err
	}
	from, err := toInt(m.GetFrom(), "sender")
	if err != nil {
		return optim.Message{}, err
	}
	round, err := toInt(m.GetRound(), "round")
	if err != nil {
		return optim.Message{}, err
	}
	return optim.Message{From: from, Round: round, Phase: m.GetPhase(), Weight: m.GetWeight(), Payload: p}, nil
}

// FromMessages converts an inbox; nil when ms is empty.
func FromMessages(ms []optim.Message) []*Message {
	if len(ms) == 0 {
		return nil
	}
	out := make([]*Message, len(ms))
	for i, m := range ms {
		out[i] = FromMessage(m)
	}
	return out
}

// OptimMessages converts an inbox back; nil when ms is empty.
func OptimMessages(ms []*Message) ([]optim.Message, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := make([]optim.Message, len(ms))
	for i, m := range ms {
		var err error
		if out[i], err = m.Optim(); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	return out, nil
}

// FromEnvelope returns e as a wire message sharing e's vector.
func FromEnvelope(e optim.Envelope) *Envelope {
	return &Envelope{To: int64(e.To), Weight: e.Weight, Pushed: e.Pushed, Payload: FromPayload(e.Payload)}
}

// Optim returns m as an optim.Envelope sharing m's vector (see
// Payload.Optim). A nil m gives the zero Envelope.
func (m *Envelope) Optim() (optim.Envelope, error) {
	p, err := m.GetPayload().Optim()
	if err != nil {
		return optim.Envelope{}, err
	}
	to, err := toInt(m.GetTo(), "receiver")
	if err != nil {
		return optim.Envelope{}, err
	}
	return optim.Envelope{To: to, Weight: m.GetWeight(), Pushed: m.GetPushed(), Payload: p}, nil
}

// FromEnvelopes converts what a client addressed; nil when es is empty.
func FromEnvelopes(es []optim.Envelope) []*Envelope {
	if len(es) == 0 {
		return nil
	}
	out := make([]*Envelope, len(es))
	for i, e := range es {
		out[i] = FromEnvelope(e)
	}
	return out
}

// OptimEnvelopes converts envelopes back; nil when es is empty.
func OptimEnvelopes(es []*Envelope) ([]optim.Envelope, error) {
	if len(es) == 0 {
		return nil, nil
	}
	out := make([]optim.Envelope, len(es))
	for i, e := range es {
		var err error
		if out[i], err = e.Optim(); err != nil {
			return nil, fmt.Errorf("envelope %d: %w", i, err)
		}
	}
	return out, nil
}

// FromPhaseSpec returns p as a wire message (nil for a nil p). It shares
// p.Args and the vectors of p.PerClient.
func FromPhaseSpec(p *optim.PhaseSpec) *PhaseSpec {
	if p == nil {
		return nil
	}
	m := &PhaseSpec{
		Name: p.Name, Rounds: int64(p.Rounds), EvalEvery: int64(p.EvalEvery), Step: int64(p.Step),
		Tick: p.Tick, Track: p.Track, States: p.States,
		Offset: int64(p.Offset), Continued: p.Continued, Total: int64(p.Total),
	}
	return m
}

// Optim returns m as an optim.PhaseSpec (nil for a nil m), sharing m's
// args map and vectors. Empty args, per-client lists and per-client maps
// come back nil.
func (m *PhaseSpec) Optim() (*optim.PhaseSpec, error) {
	if m == nil {
		return nil, nil
	}
	rounds, err := toInt(m.Rounds, "rounds")
	if err != nil {
		return nil, err
	}
	every, err := toInt(m.EvalEvery, "eval_every")
	if err != nil {
		return nil, err
	}
	step, err := toInt(m.Step, "step")
	if err != nil {
		return nil, err
	}
	offset, err := toInt(m.Offset, "offset")
	if err != nil {
		return nil, err
	}
	total, err := toInt(m.Total, "total")
	if err != nil {
		return nil, err
	}
	p := &optim.PhaseSpec{
		Name: m.Name, Rounds: rounds, EvalEvery: every, Step: step,
		Tick: m.Tick, Track: m.Track,
		Offset: offset, Continued: m.Continued, Total: total,
	}
	if len(m.States) > 0 {
		p.States = make([][]byte, len(m.States))
		for i, b := range m.States {
			p.States[i] = nilIfEmpty(b)
		}
	}
	return p, nil
}

// FromStats returns s as a wire message sharing s.X and s.Hyper.
func FromStats(s optim.Stats) *Stats {
	return &Stats{
		TrainLoss: s.TrainLoss, TrainAcc: s.TrainAcc,
		ValLoss: s.ValLoss, ValAcc: s.ValAcc,
		TestLoss: s.TestLoss, TestAcc: s.TestAcc,
		OuterLoss: s.OuterLoss,
		TrainN:    int64(s.TrainN), ValN: int64(s.ValN), TestN: int64(s.TestN),
		X: s.X, Hyper: s.Hyper, Weight: s.Weight,
	}
}

// Optim returns m as optim.Stats sharing m's vectors (nil when empty). A
// nil m gives the zero Stats.
func (m *Stats) Optim() (optim.Stats, error) {
	trainN, err := toInt(m.GetTrainN(), "train_n")
	if err != nil {
		return optim.Stats{}, err
	}
	valN, err := toInt(m.GetValN(), "val_n")
	if err != nil {
		return optim.Stats{}, err
	}
	testN, err := toInt(m.GetTestN(), "test_n")
	if err != nil {
		return optim.Stats{}, err
	}
	return optim.Stats{
		TrainLoss: m.GetTrainLoss(), TrainAcc: m.GetTrainAcc(),
		ValLoss: m.GetValLoss(), ValAcc: m.GetValAcc(),
		TestLoss: m.GetTestLoss(), TestAcc: m.GetTestAcc(),
		OuterLoss: m.GetOuterLoss(),
		TrainN:    trainN, ValN: valN, TestN: testN,
		X: vec(m.GetX()), Hyper: vec(m.GetHyper()), Weight: m.GetWeight(),
	}, nil
}

// FromResult returns r as a wire message sharing r.Values and r's vectors.
func FromResult(r optim.Result) *Result {
	return &Result{State: r.State, Stateless: r.Stateless}
}

// Optim returns m as an optim.Result sharing m's values map and vectors;
// empty maps and vectors come back nil. A nil m gives the zero Result.
func (m *Result) Optim() optim.Result {
	return optim.Result{
		State: nilIfEmpty(m.GetState()), Stateless: m.GetStateless()}
}

// FromTraffic returns t as a wire message.
func FromTraffic(t optim.Traffic) *Traffic {
	return &Traffic{Messages: t.Messages, Bytes: t.Bytes, Dropped: t.Dropped}
}

// Optim returns m as optim.Traffic. A nil m gives zero traffic.
func (m *Traffic) Optim() optim.Traffic {
	return optim.Traffic{Messages: m.GetMessages(), Bytes: m.GetBytes(), Dropped: m.GetDropped()}
}

// FromDeliveryRecord returns r as a wire message (nil for a nil r), its
// matrices copied row by row into flat vectors. It fails unless both
// matrices are n×n with n = len(r.WeightSum), as NewDeliveryRecord makes
// them.
func FromDeliveryRecord(r *optim.DeliveryRecord) (*DeliveryRecord, error) {
	if r == nil {
		return nil, nil
	}
	n := len(r.WeightSum)
	if len(r.Count) != n || len(r.Online) != n {
		return nil, fmt.Errorf("wire: delivery record has %d weight rows, %d count rows and %d online counts", n, len(r.Count), len(r.Online))
	}
	m := &DeliveryRecord{Rounds: int64(r.Rounds), N: int64(n), Online: append([]float64(nil), r.Online...)}
	if n == 0 {
		return m, nil
	}
	m.WeightSum = make([]float64, 0, n*n)
	m.Count = make([]float64, 0, n*n)
	for i := range n {
		if len(r.WeightSum[i]) != n || len(r.Count[i]) != n {
			return nil, fmt.Errorf("wire: delivery record row %d has %d weights and %d counts, want %d", i, len(r.WeightSum[i]), len(r.Count[i]), n)
		}
		m.WeightSum = append(m.WeightSum, r.WeightSum[i]...)
		m.Count = append(m.Count, r.Count[i]...)
	}
	return m, nil
}

// Optim returns m as an optim.DeliveryRecord (nil for a nil m) whose rows
// are views of m's flat vectors (capacity-limited, so appending to a row
// never overwrites the next). With n = 0 the matrices are nil. It fails
// when the vectors do not hold n·n elements.
func (m *DeliveryRecord) Optim() (*optim.DeliveryRecord, error) {
	if m == nil {
		return nil, nil
	}
	rounds, err := toInt(m.Rounds, "rounds")
	if err != nil {
		return nil, err
	}
	n, err := toInt(m.N, "n")
	if err != nil {
		return nil, err
	}
	if n < 0 || (n > 0 && n > math.MaxInt/n) {
		return nil, fmt.Errorf("wire: delivery record for %d clients", n)
	}
	if len(m.WeightSum) != n*n || len(m.Count) != n*n || len(m.Online) != n {
		return nil, fmt.Errorf("wire: delivery record for %d clients has %d weights, %d counts and %d online counts, want %d, %d and %d",
			n, len(m.WeightSum), len(m.Count), len(m.Online), n*n, n*n, n)
	}
	r := &optim.DeliveryRecord{Rounds: rounds}
	if n == 0 {
		return r, nil
	}
	r.Online = m.Online[:n:n]
	r.WeightSum = make([][]float64, n)
	r.Count = make([][]float64, n)
	for i := range n {
		r.WeightSum[i] = m.WeightSum[i*n : (i+1)*n : (i+1)*n]
		r.Count[i] = m.Count[i*n : (i+1)*n : (i+1)*n]
	}
	return r, nil
}

// errorText is the rule for errors on the wire: nil is the empty string, and
// an error whose text is empty still reads as a failure.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	if s := err.Error(); s != "" {
		return s
	}
	return fmt.Sprintf("%T with an empty message", err)
}

// textError turns a wire error string back into an error: nil for "".
// Only the text crosses the wire; wrapped errors and sentinels such as
// optim.ErrNonFinite do not survive, so errors.Is does not see them.
func textError(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// NewStep returns the step message for one client. spec is sent at step 0
// only (pass nil otherwise); inbox is what reached this client in round
// step−1, sorted by sender. The message shares the inbox's vectors and the
// spec's args and vectors.
func NewStep(epoch uint64, step int, spec *optim.PhaseSpec, tick uint64, eval bool, inbox []optim.Message) *Step {
	return &Step{Epoch: epoch, Step: int64(step), Spec: FromPhaseSpec(spec), Tick: tick, Eval: eval, Inbox: FromMessages(inbox)}
}

// OptimInbox returns the step's deliveries as optim messages, sharing their
// vectors; nil when there are none.
func (m *Step) OptimInbox() ([]optim.Message, error) {
	return OptimMessages(m.GetInbox())
}

// payloadTable collects distinct payloads: one payload sent to many
// receivers (the same vector, kind and mass) gets one entry, so that it is
// encoded once. Identity is the vector's backing array and length, which
// is how behaviours share a payload between receivers; a zero-length
// vector is never shared (inline is as small).
type payloadTable struct {
	index map[payloadKey]int64
	list  []*Payload
}

type payloadKey struct {
	kind optim.Kind
	mass uint64
	ptr  *float64
	n    int
}

// ref returns p's 1-based entry, adding it when new; 0 when p travels
// inline.
func (t *payloadTable) ref(p optim.Payload) int64 {
	if len(p.Vec) == 0 {
		return 0
	}
	k := payloadKey{p.Kind, math.Float64bits(p.Mass), &p.Vec[0], len(p.Vec)}
	if r, ok := t.index[k]; ok {
		return r
	}
	if t.index == nil {
		t.index = map[payloadKey]int64{}
	}
	t.list = append(t.list, FromPayload(p))
	t.index[k] = int64(len(t.list))
	return int64(len(t.list))
}

// resolve returns the payload of a message or envelope: its entry in
// table when ref > 0, else inline.
func resolve(inline *Payload, ref int64, table []optim.Payload) (optim.Payload, error) {
	if ref == 0 {
		return inline.Optim()
	}
	if ref < 0 || ref > int64(len(table)) {
		return optim.Payload{}, fmt.Errorf("wire: payload reference %d outside a table of %d", ref, len(table))
	}
	return table[ref-1], nil
}

func optimPayloads(ps []*Payload) ([]optim.Payload, error) {
	out := make([]optim.Payload, len(ps))
	for i, p := range ps {
		var err error
		if out[i], err = p.Optim(); err != nil {
			return nil, fmt.Errorf("payload %d: %w", i, err)
		}
	}
	return out, nil
}

// NewWorkerStep returns the step for a worker's block of clients, first
// onwards: inboxes[k] is client first+k's, sorted by sender. Each distinct
// payload is encoded once (see payloadTable); spec is sent at step 0 only.
func NewWorkerStep(epoch uint64, step int, spec *optim.PhaseSpec, tick uint64, eval bool, first int, inboxes [][]optim.Message) *WorkerStep {
	m := &WorkerStep{Epoch: epoch, Step: int64(step), Spec: FromPhaseSpec(spec), Tick: tick, Eval: eval, First: int64(first),
		Inboxes: make([]*Inbox, len(inboxes))}
	var t payloadTable
	for k, in := range inboxes {
		box := &Inbox{Messages: make([]*Message, len(in))}
		for j, msg := range in {
			w := &Message{From: int64(msg.From), Round: int64(msg.Round), Phase: msg.Phase, Weight: msg.Weight}
			if w.PayloadRef = t.ref(msg.Payload); w.PayloadRef == 0 {
				w.Payload = FromPayload(msg.Payload)
			}
			box.Messages[j] = w
		}
		m.Inboxes[k] = box
	}
	m.Payloads = t.list
	return m
}

// OptimInboxes returns the clients' inboxes; messages that carried the
// same payload share one vector, as in one process. Empty inboxes are nil.
func (m *WorkerStep) OptimInboxes() ([][]optim.Message, error) {
	if len(m.GetInboxes()) == 0 {
		return nil, nil
	}
	table, err := optimPayloads(m.GetPayloads())
	if err != nil {
		return nil, err
	}
	out := make([][]optim.Message, len(m.GetInboxes()))
	for k, box := range m.GetInboxes() {
		if len(box.GetMessages()) == 0 {
			continue
		}
		in := make([]optim.Message, len(box.Messages))
		for j, w := range box.Messages {
			p, err := resolve(w.GetPayload(), w.GetPayloadRef(), table)
			if err != nil {
				return nil, fmt.Errorf("inbox %d, message %d: %w", k, j, err)
			}
			w := &Message{From: w.GetFrom(), Round: w.GetRound(), Phase: w.GetPhase(), Weight: w.GetWeight()}
			if in[j], err = w.Optim(); err != nil {
				return nil, fmt.Errorf("inbox %d, message %d: %w", k, j, err)
			}
			in[j].Payload = p
		}
		out[k] = in
	}
	return out, nil
}

// NewAck returns a client's answer to a step. port, when not nil, is the
// client's port after it opened a round: its realized links and what it
// addressed go into the ack (sharing the payload vectors, each distinct
// payload once). err, when not nil, is sent as its text.
func NewAck(client int, epoch uint64, step, round int, port *optim.Port, stats optim.Stats, result optim.Result, err error) *Ack {
	m := &Ack{
		Client: int64(client), Epoch: epoch, Step: int64(step), Round: int64(round),
		Stats: FromStats(stats), Result: FromResult(result), Error: errorText(err),
	}
	if port != nil {
		if links := port.Round().Links; len(links) > 0 {
			m.Links = make([]int64, len(links))
			for k, j := range links {
				m.Links[k] = int64(j)
			}
		}
		var t payloadTable
		if es := port.Envelopes(); len(es) > 0 {
			m.Envelopes = make([]*Envelope, len(es))
			for i, e := range es {
				w := &Envelope{To: int64(e.To), Weight: e.Weight, Pushed: e.Pushed}
				if w.PayloadRef = t.ref(e.Payload); w.PayloadRef == 0 {
					w.Payload = FromPayload(e.Payload)
				}
				m.Envelopes[i] = w
			}
		}
		m.Payloads = t.list
	}
	return m
}

// OptimLinks returns the ack's realized links as client indices; nil when
// there are none.
func (m *Ack) OptimLinks() ([]int, error) {
	ls := m.GetLinks()
	if len(ls) == 0 {
		return nil, nil
	}
	out := make([]int, len(ls))
	for k, j := range ls {
		var err error
		if out[k], err = toInt(j, "link"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// OptimEnvelopes returns what the client addressed, sharing the vectors
// (envelopes that carried one payload share one vector).
func (m *Ack) OptimEnvelopes() ([]optim.Envelope, error) {
	es := m.GetEnvelopes()
	if len(es) == 0 {
		return nil, nil
	}
	table, err := optimPayloads(m.GetPayloads())
	if err != nil {
		return nil, err
	}
	out := make([]optim.Envelope, len(es))
	for i, e := range es {
		p, err := resolve(e.GetPayload(), e.GetPayloadRef(), table)
		if err == nil {
			out[i], err = (&Envelope{To: e.GetTo(), Weight: e.GetWeight(), Pushed: e.GetPushed()}).Optim()
		}
		if err != nil {
			return nil, fmt.Errorf("envelope %d: %w", i, err)
		}
		out[i].Payload = p
	}
	return out, nil
}

// Err returns the client's error (nil when the step succeeded), carrying
// its text only.
func (m *Ack) Err() error { return textError(m.GetError()) }

// NewBuilt returns the message that tells the supervisor client has built
// its state, or failed to with err.
func NewBuilt(client int, err error) *Built {
	return &Built{Client: int64(client), Error: errorText(err)}
}

// Err returns why building failed (nil when it did not), carrying its text
// only.
func (m *Built) Err() error { return textError(m.GetError()) }

// nilIfEmpty returns nil for an empty b (protobuf does not tell them apart).
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
