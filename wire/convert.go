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

// payloadKey identifies a payload: its kind and mass, and its vector's
// first element and length, in float64 (ptr) or float32 (ptr32) — the
// two are told apart, so a float32 vector never shares an entry with a
// float64 one at the same address.
type payloadKey struct {
	kind  optim.Kind
	mass  uint64
	ptr   *float64
	ptr32 *float32
	n     int
}

// ref returns p's 1-based entry, adding it when new; 0 when p travels
// inline.
func (t *payloadTable) ref(p optim.Payload) int {
	if p.Len() == 0 {
		return 0
	}
	k := payloadKey{kind: p.Kind, mass: math.Float64bits(p.Mass), n: p.Len()}
	if len(p.Vec) > 0 {
		k.ptr = &p.Vec[0]
	} else {
		k.ptr32 = &p.Vec32[0]
	}
	if r, ok := t.index[k]; ok {
		return r
	}
	if t.index == nil {
		t.index = map[payloadKey]int{}
	}
	t.list = append(t.list, &Payload{Kind: uint32(p.Kind), Vec: p.Vec, Mass: p.Mass, Vec32: p.Vec32})
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
		out[i] = optim.Payload{Kind: optim.Kind(p.GetKind()), Vec: p.GetVec(), Mass: p.GetMass(), Vec32: p.GetVec32()}
		if len(out[i].Vec) == 0 {
			out[i].Vec = nil
		}
		if len(out[i].Vec32) == 0 {
			out[i].Vec32 = nil
		}
		if out[i].Vec != nil && out[i].Vec32 != nil {
			return nil, fmt.Errorf("payload %d: a vector in float64 and one in float32", i)
		}
	}
	return out, nil
}

// resolve sets *p to entry ref of table when ref > 0 (else p is inline).
func resolve(p *optim.Payload, ref int, table []optim.Payload) error {
	if ref == 0 {
		if len(p.Vec) > 0 && len(p.Vec32) > 0 {
			return fmt.Errorf("wire: a payload with a vector in float64 and one in float32")
		}
		return nil
	}
	if ref < 0 || ref > len(table) {
		return fmt.Errorf("wire: payload reference %d outside a table of %d", ref, len(table))
	}
	*p = table[ref-1]
	return nil
}

// NewWorkerStep returns the step for a worker's block of clients, first
// onwards; spec is sent at step 0 only (pass nil otherwise).
func NewWorkerStep(epoch uint64, step int, spec *optim.PhaseSpec, tick uint64, eval bool, first int) *WorkerStep {
	m := &WorkerStep{Epoch: epoch, Step: int64(step), Tick: tick, Eval: eval, First: int64(first)}
	if spec != nil {
		m.Spec = encode(spec)
	}
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

// SetLate puts late messages in the step, each distinct payload once.
func (m *WorkerStep) SetLate(late []optim.LateMessage) {
	m.Late, m.Payloads = encodeLate(late)
}

// OptimLate returns the step's late messages (nil when it has none).
func (m *WorkerStep) OptimLate() ([]optim.LateMessage, error) {
	return decodeLate(m.GetLate(), m.GetPayloads())
}

// lateMessage is an optim.LateMessage on the wire, its message's payload
// in the enclosing table when Msg.Ref > 0.
type lateMessage struct {
	Due    uint64   `wire:"1"`
	To     int      `wire:"2"`
	Pushed bool     `wire:"3"`
	Msg    delivery `wire:"4"`
}

type lateList struct {
	Messages []lateMessage `wire:"1"`
}

func encodeLate(late []optim.LateMessage) ([]byte, []*Payload) {
	if len(late) == 0 {
		return nil, nil
	}
	var t payloadTable
	l := lateList{Messages: make([]lateMessage, len(late))}
	for i, m := range late {
		w := lateMessage{Due: m.Due, To: m.To, Pushed: m.Pushed, Msg: delivery{Message: m.Msg}}
		if w.Msg.Ref = t.ref(m.Msg.Payload); w.Msg.Ref > 0 {
			w.Msg.Payload = optim.Payload{}
		}
		l.Messages[i] = w
	}
	return encode(&l), t.list
}

func decodeLate(b []byte, list []*Payload) ([]optim.LateMessage, error) {
	if len(b) == 0 {
		return nil, nil
	}
	table, err := decodeTable(list)
	if err != nil {
		return nil, err
	}
	var l lateList
	if err := codec.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("late messages: %w", err)
	}
	out := make([]optim.LateMessage, len(l.Messages))
	for i, w := range l.Messages {
		if err := resolve(&w.Msg.Payload, w.Msg.Ref, table); err != nil {
			return nil, fmt.Errorf("late message %d: %w", i, err)
		}
		out[i] = optim.LateMessage{Due: w.Due, To: w.To, Pushed: w.Pushed, Msg: w.Msg.Message}
	}
	return out, nil
}

// outbox is one sender's part of a PeerBatch.
type outbox struct {
	From      int        `wire:"1"`
	Envelopes []envelope `wire:"2"`
}

// Outbox is what one sender addressed to the clients of one worker in a
// round, in the order it sent it.
type Outbox struct {
	From      int
	Envelopes []optim.Envelope
}

// NewPeerBatch returns what the senders whose ports are given (ascending,
// each opened for the round) addressed to clients first … last−1: the
// batch one worker sends another in a round. Each distinct payload is
// encoded once.
func NewPeerBatch(run, epoch uint64, step, from int, ports []*optim.Port, first, last int) *PeerBatch {
	m := &PeerBatch{Run: run, Epoch: epoch, Step: int64(step), From: int64(from)}
	var t payloadTable
	var box outbox
	for _, p := range ports {
		if p == nil {
			continue
		}
		box.From, box.Envelopes = p.Round().Self, box.Envelopes[:0]
		for _, e := range p.Envelopes() {
			if e.To < first || e.To >= last {
				continue
			}
			w := envelope{Envelope: e}
			if w.Ref = t.ref(e.Payload); w.Ref > 0 {
				w.Payload = optim.Payload{}
			}
			box.Envelopes = append(box.Envelopes, w)
		}
		if len(box.Envelopes) > 0 {
			m.Outboxes = append(m.Outboxes, encode(&box))
		}
	}
	m.Payloads = t.list
	return m
}

// OptimOutboxes returns the batch's outboxes, senders ascending;
// envelopes that carried one payload share one vector, as in one process.
func (m *PeerBatch) OptimOutboxes() ([]Outbox, error) {
	if len(m.GetOutboxes()) == 0 {
		return nil, nil
	}
	table, err := decodeTable(m.GetPayloads())
	if err != nil {
		return nil, err
	}
	out := make([]Outbox, len(m.GetOutboxes()))
	var box outbox
	for k, b := range m.GetOutboxes() {
		box = outbox{}
		if err := codec.Unmarshal(b, &box); err != nil {
			return nil, fmt.Errorf("outbox %d: %w", k, err)
		}
		if k > 0 && box.From <= out[k-1].From {
			return nil, fmt.Errorf("outbox %d: sender %d after %d", k, box.From, out[k-1].From)
		}
		o := Outbox{From: box.From, Envelopes: make([]optim.Envelope, len(box.Envelopes))}
		for i, w := range box.Envelopes {
			if err := resolve(&w.Payload, w.Ref, table); err != nil {
				return nil, fmt.Errorf("outbox %d, envelope %d: %w", k, i, err)
			}
			o.Envelopes[i] = w.Envelope
		}
		out[k] = o
	}
	return out, nil
}

// LinksDigest folds client's realized links into h (FNV-1a over the
// client's index and its links), so that a worker reports the links of a
// whole block in eight bytes and the supervisor checks them against its
// own realization. Start from DigestStart.
func LinksDigest(h uint64, client int, links []int) uint64 {
	h = fnv(h, uint64(client))
	h = fnv(h, uint64(len(links)))
	for _, j := range links {
		h = fnv(h, uint64(j))
	}
	return h
}

// DigestStart is the FNV-1a offset basis LinksDigest starts from.
const DigestStart uint64 = 14695981039346656037

func fnv(h, v uint64) uint64 {
	for range 8 {
		h ^= v & 0xff
		h *= 1099511628211
		v >>= 8
	}
	return h
}

// NewWorkerAck returns the answer of worker (its place among the peers)
// to a step, to be filled in.
func NewWorkerAck(run, epoch uint64, step, worker int) *WorkerAck {
	return &WorkerAck{Run: run, Epoch: epoch, Step: int64(step), Worker: int64(worker)}
}

// SetError records the step's failure: client's error in round.
func (m *WorkerAck) SetError(client, round int, err error) {
	m.Error, m.ErrorClient, m.ErrorRound = errorText(err), int64(client), int64(round)
}

// Err returns the step's error (nil when it succeeded), carrying its text
// only.
func (m *WorkerAck) Err() error { return textError(m.GetError()) }

// AddStats appends the next client's stats.
func (m *WorkerAck) AddStats(s *optim.Stats) { m.Stats = append(m.Stats, encode(s)) }

// AddResult appends the next client's phase result.
func (m *WorkerAck) AddResult(r *optim.Result) { m.Results = append(m.Results, encode(r)) }

// OptimStats decodes the clients' stats into dst, in block order; it
// fails unless there are len(dst) of them (or none).
func (m *WorkerAck) OptimStats(dst []optim.Stats) error {
	if len(m.GetStats()) == 0 {
		return nil
	}
	if len(m.GetStats()) != len(dst) {
		return fmt.Errorf("stats of %d clients, want %d", len(m.GetStats()), len(dst))
	}
	for k, b := range m.GetStats() {
		dst[k] = optim.Stats{}
		if err := codec.Unmarshal(b, &dst[k]); err != nil {
			return fmt.Errorf("stats %d: %w", k, err)
		}
	}
	return nil
}

// OptimResults decodes the clients' results into dst, as OptimStats.
func (m *WorkerAck) OptimResults(dst []optim.Result) error {
	if len(m.GetResults()) == 0 {
		return nil
	}
	if len(m.GetResults()) != len(dst) {
		return fmt.Errorf("results of %d clients, want %d", len(m.GetResults()), len(dst))
	}
	for k, b := range m.GetResults() {
		dst[k] = optim.Result{}
		if err := codec.Unmarshal(b, &dst[k]); err != nil {
			return fmt.Errorf("result %d: %w", k, err)
		}
	}
	return nil
}

// SetLate puts late messages in the ack, each distinct payload once.
func (m *WorkerAck) SetLate(late []optim.LateMessage) {
	m.Late, m.Payloads = encodeLate(late)
}

// OptimLate returns the ack's late messages (nil when it has none).
func (m *WorkerAck) OptimLate() ([]optim.LateMessage, error) {
	return decodeLate(m.GetLate(), m.GetPayloads())
}

// recordColumns is the part of a delivery record one worker keeps: the
// entries for receivers first … first+cols−1 (WeightSum and Count
// row-major over all senders), and those receivers' Online counts.
type recordColumns struct {
	First     int       `wire:"1"`
	Cols      int       `wire:"2"`
	WeightSum []float64 `wire:"3"`
	Count     []float64 `wire:"4"`
	Online    []float64 `wire:"5"`
}

// NewRecordColumns encodes rec's entries for receivers first … last−1.
func NewRecordColumns(rec *optim.DeliveryRecord, first, last int) []byte {
	n, cols := len(rec.Online), last-first
	c := recordColumns{First: first, Cols: cols, WeightSum: make([]float64, 0, n*cols), Count: make([]float64, 0, n*cols),
		Online: rec.Online[first:last]}
	for i := range n {
		c.WeightSum = append(c.WeightSum, rec.WeightSum[i][first:last]...)
		c.Count = append(c.Count, rec.Count[i][first:last]...)
	}
	return encode(&c)
}

// ApplyRecordColumns copies the columns b holds into rec and returns
// their range [first, last).
func ApplyRecordColumns(rec *optim.DeliveryRecord, b []byte) (first, last int, err error) {
	var c recordColumns
	if err := codec.Unmarshal(b, &c); err != nil {
		return 0, 0, fmt.Errorf("delivery record: %w", err)
	}
	n := len(rec.Online)
	if c.First < 0 || c.Cols < 0 || c.First+c.Cols > n || len(c.WeightSum) != n*c.Cols || len(c.Count) != n*c.Cols || len(c.Online) != c.Cols {
		return 0, 0, fmt.Errorf("delivery record: columns %d+%d of %d clients do not fit", c.First, c.Cols, n)
	}
	if c.Cols == 0 {
		return c.First, c.First, nil
	}
	for i := range n {
		copy(rec.WeightSum[i][c.First:c.First+c.Cols], c.WeightSum[i*c.Cols:])
		copy(rec.Count[i][c.First:c.First+c.Cols], c.Count[i*c.Cols:])
	}
	copy(rec.Online[c.First:], c.Online)
	return c.First, c.First + c.Cols, nil
}

// NewBuilt returns the message that tells the supervisor client has built
// its state, or failed to with err.
func NewBuilt(client int, err error) *Built {
	return &Built{Client: int64(client), Error: errorText(err)}
}

// Err returns why building failed (nil when it did not), carrying its text
// only.
func (m *Built) Err() error { return textError(m.GetError()) }

// NewPeerParams returns worker from's parameter vectors xs (its clients'
// Stats.X in block order, nil for a client without one) at the evaluation
// of step.
func NewPeerParams(run, epoch uint64, step, from int, xs [][]float64) *PeerParams {
	m := &PeerParams{Run: run, Epoch: epoch, Step: int64(step), From: int64(from), Lens: make([]int64, len(xs))}
	size := 0
	for _, x := range xs {
		size += len(x)
	}
	m.Values = make([]float64, 0, size)
	for k, x := range xs {
		m.Lens[k] = -1
		if x != nil {
			m.Lens[k] = int64(len(x))
			m.Values = append(m.Values, x...)
		}
	}
	return m
}

// Vectors returns the vectors NewPeerParams was given (views of Values);
// it fails unless there are want of them and their lengths add up.
func (m *PeerParams) Vectors(want int) ([][]float64, error) {
	if len(m.GetLens()) != want {
		return nil, fmt.Errorf("the parameters of %d clients, want %d", len(m.GetLens()), want)
	}
	xs := make([][]float64, want)
	v := m.GetValues()
	for k, n := range m.GetLens() {
		switch {
		case n == -1:
		case n < 0 || n > int64(len(v)):
			return nil, fmt.Errorf("client %d's parameters: %d values of %d left", k, n, len(v))
		default:
			xs[k], v = v[:n:n], v[n:]
		}
	}
	if len(v) != 0 {
		return nil, fmt.Errorf("%d values beyond the clients' parameters", len(v))
	}
	return xs, nil
}
