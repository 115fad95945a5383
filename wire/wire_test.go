package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"hgpsim/graph"
	"hgpsim/internal/codec"
	"hgpsim/optim"
)

// Values the generators draw from besides ordinary normals: signed zeros,
// subnormals, the extremes of the float64 range, NaN payloads, and numbers
// that lose bits if anything on the way rounds through float32 or text.
var special = []float64{
	0, math.Copysign(0, -1),
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
	math.Float64frombits(0x000fffffffffffff), // largest subnormal
	math.MaxFloat64, -math.MaxFloat64, math.Inf(1),
	math.Float64frombits(0x7ff8_0000_dead_beef), math.Float64frombits(0xfff0_0000_0000_0001),
	1 + 0x1p-52, 0.1, 1.0 / 3,
}

// gen draws random optim values.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) gen { return gen{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))} }

func (g gen) float() float64 {
	switch g.r.IntN(3) {
	case 0:
		return special[g.r.IntN(len(special))]
	case 1:
		return math.Float64frombits(g.r.Uint64()) // any bit pattern
	}
	return g.r.NormFloat64()
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
	names := []string{"", "sgp", "hypergradient", "λ", "θ/server"}
	return names[g.r.IntN(len(names))]
}

func (g gen) payload() optim.Payload {
	return optim.Payload{Kind: optim.Kind(g.r.IntN(256)), Vec: g.vec(), Mass: g.float()}
}

func (g gen) message() optim.Message {
	return optim.Message{From: g.int(), Round: g.int(), Phase: g.name(), Weight: g.float(), Payload: g.payload()}
}

func (g gen) bytes() []byte {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []byte{}
	}
	b := make([]byte, 1+g.r.IntN(20))
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

func (g gen) spec() *optim.PhaseSpec {
	p := &optim.PhaseSpec{Name: g.name(), Rounds: g.int(), EvalEvery: g.int(), Step: g.int(), Args: g.bytes(),
		Track: g.r.IntN(2) == 0, Offset: g.int(), Continued: g.r.IntN(2) == 0, Total: g.int(),
		Tick: []int64{optim.Continue, math.MinInt64, math.MaxInt64, int64(g.r.IntN(1 << 20))}[g.r.IntN(4)]}
	if g.r.IntN(2) == 0 {
		p.States = [][]byte{g.bytes(), g.bytes(), g.bytes()}
		p.PerClient = [][]byte{g.bytes(), g.bytes()}
	}
	return p
}

func (g gen) stats() optim.Stats {
	return optim.Stats{TrainLoss: g.float(), TrainAcc: g.float(), ValLoss: g.float(), ValAcc: g.float(),
		TestLoss: g.float(), TestAcc: g.float(), OuterLoss: g.float(),
		TrainN: g.int(), ValN: g.int(), TestN: g.int(), X: g.vec(), Hyper: g.vec(), Weight: g.float()}
}

// normalized applies the decoding rule to v in place: zero-length vectors,
// byte strings and lists come back nil.
func normalized(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			normalized(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				normalized(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.SetZero()
		}
		for i := range v.Len() {
			normalized(v.Index(i))
		}
	}
}

// same compares bit for bit (NaN payloads and −0 included) after the
// decoding rule.
func same(t *testing.T, what string, want, got any) {
	t.Helper()
	w := reflect.New(reflect.TypeOf(want))
	w.Elem().Set(reflect.ValueOf(want))
	normalized(w)
	if a, b := fmt.Sprintf("%#v", w.Elem().Interface()), fmt.Sprintf("%#v", got); a != b || !bitsEqual(w.Elem(), reflect.ValueOf(got)) {
		t.Fatalf("%s:\n got %s\nwant %s", what, b, a)
	}
}

func bitsEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case reflect.Pointer:
		return a.IsNil() == b.IsNil() && (a.IsNil() || bitsEqual(a.Elem(), b.Elem()))
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() && !bitsEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() || a.IsNil() != b.IsNil() {
			return false
		}
		for i := range a.Len() {
			if !bitsEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	return a.Interface() == b.Interface()
}

// transit encodes m as the remote transport does and decodes a fresh copy.
func transit[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSameBytesAsGenerated checks the encodings against bytes the
// generated protobuf code gave for the same values before the codec
// replaced it (testdata): the wire format has not changed.
func TestSameBytesAsGenerated(t *testing.T) {
	spec := &optim.PhaseSpec{Name: "sgp", Rounds: 40, EvalEvery: 10, Step: 3, Tick: optim.Continue, Track: true,
		Offset: 20, Continued: true, Total: 60, States: [][]byte{{1, 2, 3}, nil}}
	shared := []float64{1.5, -0.25, 3e-300, 0}
	model := optim.Payload{Kind: optim.KindModel, Vec: shared, Mass: 0.5}
	in := [][]optim.Message{
		{{From: 0, Round: 19, Phase: "sgp", Weight: 0.5, Payload: model},
			{From: 2, Round: 19, Phase: "sgp", Weight: 0.25, Payload: optim.Payload{Kind: optim.KindDual, Vec: []float64{-1, 2}}}},
		nil,
		{{From: 0, Round: 19, Phase: "sgp", Weight: 0.5, Payload: model},
			{From: 1, Round: 19, Phase: "sgp", Payload: optim.Payload{Kind: optim.KindControl, Vec: []float64{}}}},
	}
	golden(t, "workerstep", NewWorkerStep(7, 0, spec, 123, true, 4, in))

	st := optim.Stats{TrainLoss: 0.5, TrainAcc: 0.75, ValLoss: 0.625, ValAcc: 0.5, TestN: 30, ValN: 20, TrainN: 100,
		X: []float64{1, 2, 3}, Weight: 0.125}
	push := []float64{4, 5, 6}
	es := []optim.Envelope{
		{To: 0, Weight: 0.5, Pushed: true, Payload: optim.Payload{Kind: optim.KindModel, Vec: push, Mass: 0.5}},
		{To: 2, Weight: 0.5, Pushed: true, Payload: optim.Payload{Kind: optim.KindModel, Vec: push, Mass: 0.5}},
		{To: 3, Payload: optim.Payload{Kind: optim.KindUpdate, Vec: []float64{7}}},
	}
	m := NewAck(1, 7, 5, 4, nil, st, optim.Result{State: []byte("state")}, errors.New("boom"))
	m.Links = []int64{0, 2, 3}
	var tb payloadTable
	for _, e := range es {
		w := envelope{Envelope: e}
		if w.Ref = tb.ref(e.Payload); w.Ref > 0 {
			w.Payload = optim.Payload{}
		}
		m.Envelopes = append(m.Envelopes, encode(&w))
	}
	m.Payloads = tb.list
	golden(t, "ack", m)
}

func golden(t *testing.T, name string, m proto.Message) {
	t.Helper()
	want, err := os.ReadFile("testdata/" + name + ".hex")
	if err != nil {
		t.Fatal(err)
	}
	got := hex.EncodeToString(must(Marshal(m)))
	if got != strings.TrimSpace(string(want)) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func TestWorkerStepRoundTrip(t *testing.T) {
	g := newGen(12)
	for range 200 {
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
		var spec *optim.PhaseSpec
		if g.r.IntN(2) == 0 {
			spec = g.spec()
		}
		st := transit(t, NewWorkerStep(3, 4, spec, 77, true, 5, inboxes))
		if st.GetFirst() != 5 || st.GetStep() != 4 || st.GetTick() != 77 || !st.GetEval() {
			t.Fatalf("worker step header: %v", st)
		}
		gotSpec := must(st.OptimSpec())
		if spec == nil && gotSpec != nil {
			t.Fatal("a step without a phase decoded with one")
		}
		if spec != nil {
			same(t, "spec", *spec, *gotSpec)
		}
		got := must(st.OptimInboxes())
		if len(inboxes) == 0 {
			inboxes = nil
		}
		same(t, "inboxes", inboxes, got)
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
}

// TestZeroPhaseCrosses checks that a phase whose fields are all zero still
// reaches the worker (the spec field has presence).
func TestZeroPhaseCrosses(t *testing.T) {
	st := transit(t, NewWorkerStep(1, 0, &optim.PhaseSpec{}, 0, false, 0, nil))
	if p := must(st.OptimSpec()); p == nil {
		t.Fatal("a zero phase was lost")
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
	for range 50 {
		stats := g.stats()
		res := optim.Result{Data: g.bytes(), State: g.bytes(), Stateless: g.name()}
		a := transit(t, NewAck(self, 3, 5, 4, port, stats, res, nil))
		if a.GetClient() != self || a.GetEpoch() != 3 || a.GetStep() != 5 || a.GetRound() != 4 || a.Err() != nil {
			t.Fatalf("ack header: %v", a)
		}
		same(t, "links", r.Links, must(a.OptimLinks()))
		same(t, "envelopes", port.Envelopes(), must(a.OptimEnvelopes()))
		same(t, "stats", stats, must(a.OptimStats()))
		same(t, "result", res, must(a.OptimResult()))
		// The pushed vector crosses once, and the envelopes that carried
		// it share it again after decoding.
		if len(a.GetPayloads()) != 2 {
			t.Fatalf("%d payloads in the table, want 2 (the push and the send)", len(a.GetPayloads()))
		}
		if es := must(a.OptimEnvelopes()); &es[0].Vec[0] != &es[len(r.Links)-1].Vec[0] {
			t.Fatal("the pushed envelopes do not share their decoded vector")
		}
	}

	failed := transit(t, NewAck(self, 3, 5, 4, nil, optim.Stats{}, optim.Result{}, fmt.Errorf("diverged: %w", optim.ErrNonFinite)))
	if err := failed.Err(); err == nil || err.Error() != "diverged: "+optim.ErrNonFinite.Error() {
		t.Fatalf("error: %v", err)
	}
	if len(failed.GetLinks()) != 0 || len(failed.GetEnvelopes()) != 0 || len(failed.GetStats()) != 0 || len(failed.GetResult()) != 0 {
		t.Fatal("an ack without a port, stats or result carries them")
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
	// Kind 256 does not fit optim.Kind.
	if _, err := (&WorkerStep{Payloads: []*Payload{{Kind: 256}}, Inboxes: [][]byte{{}}}).OptimInboxes(); err == nil {
		t.Error("payload kind 256 accepted")
	}
	ref := codec.MustMarshal(&inbox{Messages: []delivery{{Ref: 2}}})
	if _, err := (&WorkerStep{Inboxes: [][]byte{ref}}).OptimInboxes(); err == nil {
		t.Error("a reference outside the payload table was accepted")
	}
	env := codec.MustMarshal(&envelope{Ref: -1})
	if _, err := (&Ack{Envelopes: [][]byte{env}}).OptimEnvelopes(); err == nil {
		t.Error("a negative reference was accepted")
	}
	if _, err := (&WorkerStep{Spec: []byte{0x0a, 0x05, 'a'}}).OptimSpec(); err == nil {
		t.Error("a truncated phase was accepted")
	}
	if _, err := (&Ack{Stats: []byte{0x08, 0x01}}).OptimStats(); err == nil {
		t.Error("stats with a varint loss were accepted")
	}
}

// Docs quote bytes per message: a Payload with a d-vector is 8·d bytes
// plus a small constant (packed doubles, no per-element tag), and a
// message in an inbox adds its header.
func TestEncodedSize(t *testing.T) {
	for _, d := range []int{0, 1, 10, 100, 7850, 100000} {
		v := make([]float64, d)
		for k := range v {
			v[k] = float64(k) + 0.5
		}
		size := len(encode(&optim.Payload{Kind: optim.KindModel, Vec: v, Mass: 0.5}))
		if size < 8*d || size > 8*d+16 {
			t.Errorf("d = %d: %d bytes, want 8·d = %d plus at most 16", d, size, 8*d)
		}
	}
	const d, k = 7850, 10
	inbox := make([]optim.Message, k)
	for i := range inbox {
		v := make([]float64, d)
		for j := range v {
			v[j] = float64(i*d+j) * 1e-3
		}
		inbox[i] = optim.Message{From: i + 1, Round: 17, Phase: "lower", Weight: 1.0 / 3, Payload: optim.Payload{Kind: optim.KindModel, Vec: v, Mass: 0.1}}
	}
	msg := len(encode(&inbox[0]))
	pl := len(encode(&inbox[0].Payload))
	if msg-pl != 24 {
		t.Errorf("message header %d bytes, want 24 (28 with the payload's and the message's length prefixes)", msg-pl)
	}
	st := NewWorkerStep(12, 18, nil, 4242, true, 0, [][]optim.Message{inbox})
	size := proto.Size(st)
	if size < k*8*d || size > k*(8*d+64) {
		t.Errorf("step with %d messages of d = %d: %d bytes", k, d, size)
	}
	if b := must(Marshal(st)); len(b) != size || !bytes.Equal(b, must(Marshal(st))) {
		t.Errorf("proto.Size %d, encoded %d, or two encodings differ", size, len(b))
	}
}
