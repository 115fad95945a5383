package wire

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"hgpsim/graph"
	"hgpsim/optim"
)

// Values the generators draw from besides ordinary normals: signed zeros,
// subnormals, the extremes of the float64 range, and numbers that lose
// bits if anything on the way rounds through float32 or text.
var special = []float64{
	0, math.Copysign(0, -1),
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
	math.Float64frombits(0x000fffffffffffff), // largest subnormal
	math.Float64frombits(0x0010000000000000), // smallest normal
	math.MaxFloat64, -math.MaxFloat64,
	1e-300, -1e300, 1 + 0x1p-52, 0.1, 1.0 / 3,
}

// gen draws random optim values.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) gen { return gen{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))} }

func (g gen) float() float64 {
	switch g.r.IntN(4) {
	case 0:
		return special[g.r.IntN(len(special))]
	case 1:
		// Any finite bit pattern: every exponent, every mantissa.
		for {
			f := math.Float64frombits(g.r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
	default:
		return g.r.NormFloat64() * math.Pow(10, float64(g.r.IntN(41)-20))
	}
}

// vec returns nil, an empty non-nil vector, or up to 40 floats.
func (g gen) vec() []float64 {
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return []float64{}
	}
	v := make([]float64, 1+g.r.IntN(40))
	for k := range v {
		v[k] = g.float()
	}
	return v
}

func (g gen) int() int {
	if g.r.IntN(8) == 0 {
		return math.MaxInt64 - g.r.IntN(3) // the varint's widest case
	}
	return g.r.IntN(1000)
}

func (g gen) name() string {
	names := []string{"", "train", "hypergradient", "λ", "x", "y", "restart", "θ/server"}
	return names[g.r.IntN(len(names))] + fmt.Sprint(g.r.IntN(3))
}

// vectors returns nil, an empty non-nil map, or a few named vectors (some
// of them nil or empty).
func (g gen) vectors() map[string][]float64 {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return map[string][]float64{}
	}
	m := map[string][]float64{}
	for range 1 + g.r.IntN(6) {
		m[g.name()] = g.vec()
	}
	return m
}

func (g gen) values() map[string]float64 {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return map[string]float64{}
	}
	m := map[string]float64{}
	for range 1 + g.r.IntN(6) {
		m[g.name()] = g.float()
	}
	return m
}

func (g gen) payload() optim.Payload {
	return optim.Payload{Kind: optim.Kind(g.r.IntN(256)), Vec: g.vec(), Mass: g.float()}
}

func (g gen) message() optim.Message {
	return optim.Message{From: g.int(), Round: g.int(), Phase: g.name(), Weight: g.float(), Payload: g.payload()}
}

func (g gen) envelope() optim.Envelope {
	return optim.Envelope{To: g.int(), Weight: g.float(), Pushed: g.r.IntN(2) == 0, Payload: g.payload()}
}

func (g gen) spec() *optim.PhaseSpec {
	p := &optim.PhaseSpec{
		Name: g.name(), Rounds: g.int(), EvalEvery: g.int(), Step: g.int(),
		Args: g.values(), Track: g.r.IntN(2) == 0,
		Offset: g.int(), Continued: g.r.IntN(2) == 0, Total: g.int(),
	}
	switch g.r.IntN(4) {
	case 0:
		p.Tick = optim.Continue
	case 1:
		p.Tick = math.MinInt64 + int64(g.r.IntN(3))
	case 2:
		p.Tick = math.MaxInt64 - int64(g.r.IntN(3))
	default:
		p.Tick = int64(g.r.IntN(1 << 20))
	}
	switch g.r.IntN(4) {
	case 0:
	case 1:
		p.PerClient = []map[string][]float64{}
	default:
		p.PerClient = make([]map[string][]float64, 1+g.r.IntN(5))
		for i := range p.PerClient {
			p.PerClient[i] = g.vectors()
		}
	}
	switch g.r.IntN(3) {
	case 0:
	case 1:
		p.States = [][]byte{}
	default:
		p.States = make([][]byte, 1+g.r.IntN(5))
		for i := range p.States {
			p.States[i] = g.bytes()
		}
	}
	return p
}

func (g gen) stats() optim.Stats {
	return optim.Stats{
		TrainLoss: g.float(), TrainAcc: g.float(), ValLoss: g.float(), ValAcc: g.float(),
		TestLoss: g.float(), TestAcc: g.float(), OuterLoss: g.float(),
		TrainN: g.int(), ValN: g.int(), TestN: g.int(), X: g.vec(), Hyper: g.vec(), Weight: g.float(),
	}
}

func (g gen) result() optim.Result {
	r := optim.Result{Vectors: g.vectors(), Values: g.values(), State: g.bytes()}
	if g.r.IntN(2) == 0 {
		r.Stateless = g.name()
	}
	return r
}

// bytes returns nil, an empty non-nil slice or a few random bytes.
func (g gen) bytes() []byte {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []byte{}
	}
	b := make([]byte, 1+g.r.IntN(40))
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func (g gen) traffic() optim.Traffic {
	return optim.Traffic{Messages: int64(g.int()), Bytes: int64(g.int()), Dropped: int64(g.int())}
}

func (g gen) record() *optim.DeliveryRecord {
	n := g.r.IntN(6)
	r := optim.NewDeliveryRecord(n)
	r.Rounds = g.int()
	for i := range n {
		for j := range n {
			r.WeightSum[i][j] = g.float()
			r.Count[i][j] = float64(g.r.IntN(100))
		}
		r.Online[i] = float64(g.r.IntN(100))
	}
	return r
}

// sameBits reports where got differs from want, with floats compared by
// their bits and the nil rule applied: where want has a zero-length slice
// or map, nil or not, got must be nil.
func sameBits(want, got reflect.Value, path string) error {
	if want.Type() != got.Type() {
		return fmt.Errorf("%s: type %v, want %v", path, got.Type(), want.Type())
	}
	switch want.Kind() {
	case reflect.Float64:
		if a, b := math.Float64bits(want.Float()), math.Float64bits(got.Float()); a != b {
			return fmt.Errorf("%s: bits %#016x, want %#016x", path, b, a)
		}
	case reflect.Slice:
		if want.Len() == 0 {
			if !got.IsNil() {
				return fmt.Errorf("%s: got non-nil %v for a zero-length value", path, got)
			}
			return nil
		}
		if got.Len() != want.Len() {
			return fmt.Errorf("%s: length %d, want %d", path, got.Len(), want.Len())
		}
		for i := range want.Len() {
			if err := sameBits(want.Index(i), got.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if want.Len() == 0 {
			if !got.IsNil() {
				return fmt.Errorf("%s: got non-nil %v for a zero-length map", path, got)
			}
			return nil
		}
		if got.Len() != want.Len() {
			return fmt.Errorf("%s: %d keys, want %d", path, got.Len(), want.Len())
		}
		for _, k := range want.MapKeys() {
			v := got.MapIndex(k)
			if !v.IsValid() {
				return fmt.Errorf("%s: key %v missing", path, k)
			}
			if err := sameBits(want.MapIndex(k), v, fmt.Sprintf("%s[%v]", path, k)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range want.NumField() {
			if err := sameBits(want.Field(i), got.Field(i), path+"."+want.Type().Field(i).Name); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				return fmt.Errorf("%s: nil %v, want nil %v", path, got.IsNil(), want.IsNil())
			}
			return nil
		}
		return sameBits(want.Elem(), got.Elem(), path)
	case reflect.Int, reflect.Int64, reflect.Uint8, reflect.Uint64:
		if !want.Equal(got) {
			return fmt.Errorf("%s: %v, want %v", path, got, want)
		}
	case reflect.String, reflect.Bool:
		if !want.Equal(got) {
			return fmt.Errorf("%s: %v, want %v", path, got, want)
		}
	default:
		return fmt.Errorf("%s: sameBits does not handle %v", path, want.Kind())
	}
	return nil
}

func assertSame(t *testing.T, want, got any) {
	t.Helper()
	if err := sameBits(reflect.ValueOf(want), reflect.ValueOf(got), fmt.Sprintf("%T", want)); err != nil {
		t.Fatal(err)
	}
}

// transit encodes m deterministically, checks that encoding it again gives
// the same bytes, and decodes the bytes into a new message of m's type.
func transit[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Fatalf("%T: two encodings of one value differ", m)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// must returns v, or panics (failing the test) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

const cases = 2000

func TestPayloadRoundTrip(t *testing.T) {
	g := newGen(1)
	for range cases {
		p := g.payload()
		assertSame(t, p, must(transit(t, FromPayload(p)).Optim()))
	}
}

func TestMessageRoundTrip(t *testing.T) {
	g := newGen(2)
	for range cases {
		m := g.message()
		assertSame(t, m, must(transit(t, FromMessage(m)).Optim()))
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	g := newGen(3)
	for range cases {
		e := g.envelope()
		assertSame(t, e, must(transit(t, FromEnvelope(e)).Optim()))
	}
}

func TestPhaseSpecRoundTrip(t *testing.T) {
	g := newGen(4)
	for range cases {
		p := g.spec()
		assertSame(t, p, must(transit(t, FromPhaseSpec(p)).Optim()))
	}
	if FromPhaseSpec(nil) != nil || must((*PhaseSpec)(nil).Optim()) != nil {
		t.Fatal("a nil spec does not stay nil")
	}
}

func TestStatsRoundTrip(t *testing.T) {
	g := newGen(5)
	for range cases {
		s := g.stats()
		assertSame(t, s, must(transit(t, FromStats(s)).Optim()))
	}
}

func TestResultRoundTrip(t *testing.T) {
	g := newGen(6)
	for range cases {
		r := g.result()
		assertSame(t, r, transit(t, FromResult(r)).Optim())
	}
}

func TestTrafficRoundTrip(t *testing.T) {
	g := newGen(7)
	for range cases {
		tr := g.traffic()
		assertSame(t, tr, transit(t, FromTraffic(tr)).Optim())
	}
}

func TestDeliveryRecordRoundTrip(t *testing.T) {
	g := newGen(8)
	for range cases {
		r := g.record()
		got := must(must(FromDeliveryRecord(r)).Optim())
		assertSame(t, r, must(transit(t, must(FromDeliveryRecord(r))).Optim()))
		// Rows are views of one flat vector, capacity-limited so that
		// appending to one cannot overwrite the next.
		for i, row := range got.WeightSum {
			if cap(row) != len(row) || cap(got.Count[i]) != len(got.Count[i]) {
				t.Fatalf("row %d: capacity beyond its length", i)
			}
		}
	}
	if r, err := FromDeliveryRecord(nil); r != nil || err != nil {
		t.Fatal("a nil record does not stay nil")
	}
}

// Losses of a diverging run are NaN or infinite; their bits must survive
// too (Go's protobuf moves doubles as their bits).
func TestNonFiniteBits(t *testing.T) {
	v := []float64{math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff8000000000001), // quiet NaN with a payload
		math.Float64frombits(0xfff8dead0000beef), // negative quiet NaN
		math.Float64frombits(0x7ff0000000000001), // signalling NaN
	}
	s := optim.Stats{TrainLoss: math.NaN(), ValLoss: math.Inf(1), X: v, Hyper: v}
	assertSame(t, s, must(transit(t, FromStats(s)).Optim()))
	p := optim.Payload{Kind: optim.KindModel, Vec: v, Mass: math.Inf(-1)}
	assertSame(t, p, must(transit(t, FromPayload(p)).Optim()))
}

// Deterministic encoding: the same value gives the same bytes however its
// maps were built, and decoding and encoding again reproduces them.
func TestDeterministicEncoding(t *testing.T) {
	g := newGen(9)
	for range 200 {
		spec := g.spec()
		res := g.result()
		for _, m := range []proto.Message{FromPhaseSpec(spec), FromResult(res)} {
			b := must(Marshal(m))
			// The same content in maps filled in another order.
			var rebuilt proto.Message
			switch m := m.(type) {
			case *PhaseSpec:
				rebuilt = FromPhaseSpec(reversedSpec(spec))
			case *Result:
				rebuilt = FromResult(optim.Result{Vectors: reversedVectors(res.Vectors), Values: reversedValues(res.Values), State: res.State, Stateless: res.Stateless})
			default:
				t.Fatalf("unexpected %T", m)
			}
			if !bytes.Equal(b, must(Marshal(rebuilt))) {
				t.Fatalf("%T: maps built in another order encode differently", m)
			}
			back := m.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(b, back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, must(Marshal(back))) {
				t.Fatalf("%T: decoding and encoding again changes the bytes", m)
			}
		}
	}
}

// descendingKeys returns m's keys in descending order, the reverse of the
// encoding's.
func descendingKeys[V any](m map[string]V) []string {
	ks := slices.Sorted(maps.Keys(m))
	slices.Reverse(ks)
	return ks
}

func reversedVectors(m map[string][]float64) map[string][]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string][]float64, len(m))
	for _, k := range descendingKeys(m) {
		out[k] = append([]float64(nil), m[k]...)
	}
	return out
}

func reversedValues(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for _, k := range descendingKeys(m) {
		out[k] = m[k]
	}
	return out
}

func reversedSpec(p *optim.PhaseSpec) *optim.PhaseSpec {
	q := *p
	q.Args = reversedValues(p.Args)
	if p.PerClient != nil {
		q.PerClient = make([]map[string][]float64, len(p.PerClient))
		for i, in := range p.PerClient {
			q.PerClient[i] = reversedVectors(in)
		}
	}
	return &q
}

// A step 0 carries the phase with each client's inputs; a later step
// carries the client's inbox.
func TestStepRoundTrip(t *testing.T) {
	g := newGen(10)
	spec := &optim.PhaseSpec{
		Name: "lower", Rounds: 50, EvalEvery: 10, Step: 3, Tick: optim.Continue,
		Args: map[string]float64{"restart": 1, "lr": 0.05},
		PerClient: []map[string][]float64{
			{"x0": {1, math.Copysign(0, -1), math.SmallestNonzeroFloat64}, "y0": {}},
			nil,
			{"x0": g.vec(), "λ": {2.5}},
		},
		Track: true,
	}
	st := transit(t, NewStep(7, 0, spec, 1234, false, nil))
	if st.GetEpoch() != 7 || st.GetStep() != 0 || st.GetTick() != 1234 || st.GetEval() || len(st.GetInbox()) != 0 {
		t.Fatalf("step header: %v", st)
	}
	assertSame(t, spec, must(st.GetSpec().Optim()))

	for range 200 {
		inbox := make([]optim.Message, g.r.IntN(12))
		for i := range inbox {
			inbox[i] = g.message()
		}
		st := transit(t, NewStep(uint64(g.int()), 1+g.r.IntN(99), nil, g.r.Uint64(), true, inbox))
		if st.GetSpec() != nil || !st.GetEval() {
			t.Fatalf("step header: %v", st)
		}
		assertSame(t, inbox, must(st.OptimInbox()))
	}
}

// A worker step carries many inboxes; a payload shared by messages (a
// push) is encoded once, decoded once and shared again.
func TestWorkerStepRoundTrip(t *testing.T) {
	g := newGen(12)
	for range 100 {
		shared := g.payload()
		inboxes := make([][]optim.Message, g.r.IntN(6))
		refs := 0
		for k := range inboxes {
			for range g.r.IntN(5) {
				m := g.message()
				if g.r.IntN(2) == 0 {
					m.Payload = shared
					refs++
				}
				inboxes[k] = append(inboxes[k], m)
			}
		}
		st := transit(t, NewWorkerStep(3, 4, nil, 77, true, 5, inboxes))
		if st.GetFirst() != 5 || st.GetStep() != 4 || st.GetTick() != 77 || !st.GetEval() || st.GetSpec() != nil {
			t.Fatalf("worker step header: %v", st)
		}
		got := must(st.OptimInboxes())
		for k := range inboxes {
			if len(inboxes[k]) == 0 {
				inboxes[k] = nil // the rule: zero-length comes back nil
			}
		}
		assertSame(t, inboxes, got)
		if refs > 1 && len(shared.Vec) > 0 {
			var first *float64
			for k := range inboxes {
				for j, m := range inboxes[k] {
					if len(m.Vec) > 0 && &m.Vec[0] == &shared.Vec[0] {
						if first == nil {
							first = &got[k][j].Vec[0]
						} else if &got[k][j].Vec[0] != first {
							t.Fatal("a shared payload was decoded twice")
						}
					}
				}
			}
		}
	}
	if _, err := (&WorkerStep{Inboxes: []*Inbox{{Messages: []*Message{{PayloadRef: 2}}}}}).OptimInboxes(); err == nil {
		t.Fatal("a reference outside the payload table was accepted")
	}
}

// An ack carries the port of a real round: the links the network realized
// and what the behaviour pushed and sent over them.
func TestAckRoundTrip(t *testing.T) {
	const n, self = 5, 2
	nw, err := (&graph.FullyConnected{}).Build(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	port := optim.NewPort(nw, self)
	r := port.Open("mix", 4, 99)
	optim.Push(port, r.Links, optim.Payload{Kind: optim.KindModel, Vec: []float64{1, 2, 3}, Mass: 0.25})
	optim.Send(port, []int{0, 4}, optim.Payload{Kind: optim.KindControl, Vec: []float64{math.Copysign(0, -1)}})

	g := newGen(11)
	stats, res := g.stats(), g.result()
	a := transit(t, NewAck(self, 3, 5, 4, port, stats, res, nil))
	if a.GetClient() != self || a.GetEpoch() != 3 || a.GetStep() != 5 || a.GetRound() != 4 || a.Err() != nil {
		t.Fatalf("ack header: %v", a)
	}
	assertSame(t, r.Links, must(a.OptimLinks()))
	assertSame(t, port.Envelopes(), must(a.OptimEnvelopes()))
	// The pushed vector crosses once, and the envelopes that carried it
	// share it again after decoding.
	if len(a.GetPayloads()) != 2 {
		t.Fatalf("%d payloads in the table, want 2 (the push and the send)", len(a.GetPayloads()))
	}
	if es := must(a.OptimEnvelopes()); &es[0].Vec[0] != &es[len(r.Links)-1].Vec[0] {
		t.Fatal("the pushed envelopes do not share their decoded vector")
	}
	assertSame(t, stats, must(a.GetStats().Optim()))
	assertSame(t, res, a.GetResult().Optim())

	failed := transit(t, NewAck(self, 3, 5, 4, nil, optim.Stats{}, optim.Result{}, fmt.Errorf("diverged: %w", optim.ErrNonFinite)))
	if err := failed.Err(); err == nil || err.Error() != "diverged: "+optim.ErrNonFinite.Error() {
		t.Fatalf("error: %v", err)
	}
	if len(failed.GetLinks()) != 0 || len(failed.GetEnvelopes()) != 0 {
		t.Fatal("an ack without a port carries links or envelopes")
	}
	if err := transit(t, NewAck(0, 0, 0, 0, nil, optim.Stats{}, optim.Result{}, errors.New(""))).Err(); err == nil {
		t.Fatal("an error with an empty text reads as success")
	}
}

func TestBuiltRoundTrip(t *testing.T) {
	if b := transit(t, NewBuilt(4, nil)); b.GetClient() != 4 || b.Err() != nil {
		t.Fatalf("built: %v", b)
	}
	b := transit(t, NewBuilt(9, errors.New("no data for client 9")))
	if b.GetClient() != 9 || b.Err() == nil || b.Err().Error() != "no data for client 9" {
		t.Fatalf("built: %v", b)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, k := range []Kind{256, -1} {
		if _, err := (&Payload{Kind: k}).Optim(); err == nil {
			t.Errorf("kind %d accepted", k)
		}
		if _, err := transit(t, &Message{Payload: &Payload{Kind: k}}).Optim(); err == nil {
			t.Errorf("message with kind %d accepted", k)
		}
	}
	if _, err := (&DeliveryRecord{N: 2, WeightSum: make([]float64, 4), Count: make([]float64, 3)}).Optim(); err == nil {
		t.Error("short count accepted")
	}
	if _, err := (&DeliveryRecord{N: -1}).Optim(); err == nil {
		t.Error("negative n accepted")
	}
	if _, err := (&DeliveryRecord{N: 1 << 40}).Optim(); err == nil {
		t.Error("huge n accepted")
	}
	ragged := optim.NewDeliveryRecord(3)
	ragged.Count[1] = ragged.Count[1][:2]
	if _, err := FromDeliveryRecord(ragged); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("ragged record: %v", err)
	}
}

// Docs quote bytes per message: a Payload with a d-vector is 8·d bytes
// plus a small constant (packed doubles, no per-element tag).
func TestEncodedSize(t *testing.T) {
	for _, d := range []int{0, 1, 10, 100, 7850, 100000} {
		v := make([]float64, d)
		for k := range v {
			v[k] = float64(k) + 0.5
		}
		p := FromPayload(optim.Payload{Kind: optim.KindModel, Vec: v, Mass: 0.5})
		size := proto.Size(p)
		if size < 8*d || size > 8*d+16 {
			t.Errorf("d = %d: %d bytes, want 8·d = %d plus at most 16", d, size, 8*d)
		}
		t.Logf("Payload, d = %d: %d bytes (8·d + %d)", d, size, size-8*d)
	}
	const d, k = 7850, 10
	inbox := make([]optim.Message, k)
	for i := range inbox {
		v := make([]float64, d)
		for j := range v {
			v[j] = float64(i*d+j) * 1e-3
		}
		inbox[i] = optim.Message{From: i, Round: 17, Phase: "lower", Weight: 1.0 / 3, Payload: optim.Payload{Kind: optim.KindModel, Vec: v, Mass: 0.1}}
	}
	msg := proto.Size(FromMessage(inbox[0]))
	pl := proto.Size(FromPayload(inbox[0].Payload))
	t.Logf("Message, d = %d, phase %q: %d bytes (payload %d + header %d, +4 as an inbox element)", d, inbox[0].Phase, msg, pl, msg-pl)
	st := NewStep(12, 18, nil, 4242, true, inbox)
	size := proto.Size(st)
	if size < k*8*d || size > k*(8*d+64) {
		t.Errorf("step with %d messages of d = %d: %d bytes", k, d, size)
	}
	t.Logf("Step with %d messages of d = %d: %d bytes (%d·8·d + %d)", k, d, size, k, size-k*8*d)
	if b := must(Marshal(st)); len(b) != size {
		t.Errorf("proto.Size %d, encoded %d", size, len(b))
	}
}
