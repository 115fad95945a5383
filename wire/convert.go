package wire

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"hgpsim/internal/codec"
	"hgpsim/optim"
)

// Marshal encodes m deterministically, so that the same value always gives
// the same bytes. Use it (or proto.MarshalOptions{Deterministic: true})
// wherever bytes are compared, hashed or counted.
func Marshal(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// The optim types cross in the codec's encoding, numbered by their wire
// tags. A message or envelope whose payload is in the enclosing table
// carries its entry instead: these are the types with that one field more.

// delivery is an optim.Message on the wire: when Ref > 0 its payload is
// entry Ref−1 of the enclosing table and travels empty.
type delivery struct {
	optim.Message `wire:",inline"`
	Ref           int `wire:"6"`
}

// inbox is what reached one client in a round, sorted by sender.
type inbox struct {
	Messages []delivery `wire:"1"`
}

// envelope is an optim.Envelope on the wire: when Ref > 0 its payload is
// entry Ref−1 of the enclosing table and travels empty.
type envelope struct {
	optim.Envelope `wire:",inline"`
	Ref            int `wire:"5"`
}

// encode returns v's encoding; the optim types and this file's have one.
func encode(v any) []byte {
	b := codec.MustMarshal(v)
	if b == nil {
		b = []byte{} // a present, empty entry of a list
	}
	return b
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

// payloadTable collects distinct payloads: one payload sent to many
// receivers (the same vector, kind and mass) gets one entry, so that it is
// encoded once. Identity is the vector's backing array and length, which
// is how behaviours share a payload between receivers; a zero-length
// vector is never shared (inline is as small).
type payloadTable struct {
	index map[payloadKey]int
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
func (t *payloadTable) ref(p optim.Payload) int {
	if len(p.Vec) == 0 {
		return 0
	}
	k := payloadKey{p.Kind, math.Float64bits(p.Mass), &p.Vec[0], len(p.Vec)}
	if r, ok := t.index[k]; ok {
		return r
	}
	if t.index == nil {
		t.index = map[payloadKey]int{}
	}
	t.list = append(t.list, &Payload{Kind: uint32(p.Kind), Vec: p.Vec, Mass: p.Mass})
	t.index[k] = len(t.list)
	return len(t.list)
}

// decodeTable returns a payload table's entries, sharing their vectors.
func decodeTable(list []*Payload) ([]optim.Payload, error) {
	out := make([]optim.Payload, len(list))
	for i, p := range list {
		if p.GetKind() > math.MaxUint8 {
			return nil, fmt.Errorf("payload %d: kind %d is not an optim.Kind", i, p.GetKind())
		}
		out[i] = optim.Payload{Kind: optim.Kind(p.GetKind()), Vec: p.GetVec(), Mass: p.GetMass()}
		if len(out[i].Vec) == 0 {
			out[i].Vec = nil
		}
	}
	return out, nil
}

// resolve sets *p to entry ref of table when ref > 0 (else p is inline).
func resolve(p *optim.Payload, ref int, table []optim.Payload) error {
	if ref == 0 {
		return nil
	}
	if ref < 0 || ref > len(table) {
		return fmt.Errorf("wire: payload reference %d outside a table of %d", ref, len(table))
	}
	*p = table[ref-1]
	return nil
}

// NewWorkerStep returns the step for a worker's block of clients, first
// onwards: inboxes[k] is client first+k's, sorted by sender. Each distinct
// payload is encoded once (see payloadTable); spec is sent at step 0 only
// (pass nil otherwise).
func NewWorkerStep(epoch uint64, step int, spec *optim.PhaseSpec, tick uint64, eval bool, first int, inboxes [][]optim.Message) *WorkerStep {
	m := &WorkerStep{Epoch: epoch, Step: int64(step), Tick: tick, Eval: eval, First: int64(first),
		Inboxes: make([][]byte, len(inboxes))}
	if spec != nil {
		m.Spec = encode(spec)
	}
	var t payloadTable
	var box inbox
	for k, in := range inboxes {
		box.Messages = box.Messages[:0]
		for _, msg := range in {
			d := delivery{Message: msg}
			if d.Ref = t.ref(msg.Payload); d.Ref > 0 {
				d.Payload = optim.Payload{}
			}
			box.Messages = append(box.Messages, d)
		}
		m.Inboxes[k] = encode(&box)
	}
	m.Payloads = t.list
	return m
}

// OptimSpec returns the step's phase: nil when the step carries none.
func (m *WorkerStep) OptimSpec() (*optim.PhaseSpec, error) {
	if m.Spec == nil {
		return nil, nil
	}
	p := new(optim.PhaseSpec)
	if err := codec.Unmarshal(m.Spec, p); err != nil {
		return nil, fmt.Errorf("phase: %w", err)
	}
	return p, nil
}

// OptimInboxes returns the clients' inboxes; messages that carried the
// same payload share one vector, as in one process. Empty inboxes are nil.
func (m *WorkerStep) OptimInboxes() ([][]optim.Message, error) {
	if len(m.GetInboxes()) == 0 {
		return nil, nil
	}
	table, err := decodeTable(m.GetPayloads())
	if err != nil {
		return nil, err
	}
	out := make([][]optim.Message, len(m.GetInboxes()))
	var box inbox
	for k, b := range m.GetInboxes() {
		if err := codec.Unmarshal(b, &box); err != nil {
			return nil, fmt.Errorf("inbox %d: %w", k, err)
		}
		if len(box.Messages) == 0 {
			continue
		}
		in := make([]optim.Message, len(box.Messages))
		for j, d := range box.Messages {
			if err := resolve(&d.Payload, d.Ref, table); err != nil {
				return nil, fmt.Errorf("inbox %d, message %d: %w", k, j, err)
			}
			in[j] = d.Message
		}
		out[k] = in
	}
	return out, nil
}

// NewAck returns a client's answer to a step. port, when not nil, is the
// client's port after it opened a round: its realized links and what it
// addressed go into the ack (each distinct payload once). err, when not
// nil, is sent as its text.
func NewAck(client int, epoch uint64, step, round int, port *optim.Port, stats optim.Stats, result optim.Result, err error) *Ack {
	m := &Ack{
		Client: int64(client), Epoch: epoch, Step: int64(step), Round: int64(round),
		Stats: codec.MustMarshal(&stats), Result: codec.MustMarshal(&result), Error: errorText(err),
	}
	if port == nil {
		return m
	}
	if links := port.Round().Links; len(links) > 0 {
		m.Links = make([]int64, len(links))
		for k, j := range links {
			m.Links[k] = int64(j)
		}
	}
	var t payloadTable
	if es := port.Envelopes(); len(es) > 0 {
		m.Envelopes = make([][]byte, len(es))
		for i, e := range es {
			w := envelope{Envelope: e}
			if w.Ref = t.ref(e.Payload); w.Ref > 0 {
				w.Payload = optim.Payload{}
			}
			m.Envelopes[i] = encode(&w)
		}
	}
	m.Payloads = t.list
	return m
}

// OptimStats returns the client's stats (zero when it reported none).
func (m *Ack) OptimStats() (optim.Stats, error) {
	var s optim.Stats
	if err := codec.Unmarshal(m.GetStats(), &s); err != nil {
		return s, fmt.Errorf("stats: %w", err)
	}
	return s, nil
}

// OptimResult returns the client's phase result (zero when it reported
// none).
func (m *Ack) OptimResult() (optim.Result, error) {
	var r optim.Result
	if err := codec.Unmarshal(m.GetResult(), &r); err != nil {
		return r, fmt.Errorf("result: %w", err)
	}
	return r, nil
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
		if int64(int(j)) != j {
			return nil, fmt.Errorf("wire: link %d does not fit an int", j)
		}
		out[k] = int(j)
	}
	return out, nil
}

// OptimEnvelopes returns what the client addressed (envelopes that carried
// one payload share one vector).
func (m *Ack) OptimEnvelopes() ([]optim.Envelope, error) {
	es := m.GetEnvelopes()
	if len(es) == 0 {
		return nil, nil
	}
	table, err := decodeTable(m.GetPayloads())
	if err != nil {
		return nil, err
	}
	out := make([]optim.Envelope, len(es))
	for i, b := range es {
		var w envelope
		err := codec.Unmarshal(b, &w)
		if err == nil {
			err = resolve(&w.Payload, w.Ref, table)
		}
		if err != nil {
			return nil, fmt.Errorf("envelope %d: %w", i, err)
		}
		out[i] = w.Envelope
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
