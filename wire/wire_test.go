package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
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

// vec32 is vec in float32, from any bit pattern or a rounded normal.
func (g gen) vec32() []float32 {
	v := g.vec()
	if v == nil {
		return nil
	}
	v32 := make([]float32, len(v))
	for k := range v32 {
		if g.r.IntN(2) == 0 {
			v32[k] = math.Float32frombits(g.r.Uint32())
		} else {
			v32[k] = float32(v[k])
		}
	}
	return v32
}

// payload carries a float64 vector, or in one case out of four a float32
// one.
func (g gen) payload() optim.Payload {
	if g.r.IntN(4) == 0 {
		return optim.Payload{Kind: optim.Kind(g.r.IntN(256)), Vec32: g.vec32(), Mass: g.float()}
	}
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
	case reflect.Float32:
		return math.Float32bits(a.Interface().(float32)) == math.Float32bits(b.Interface().(float32))
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

var update = flag.Bool("update", false, "rewrite the golden encodings in testdata")

// TestGoldenBytes checks the encodings against bytes kept in testdata:
// the wire format changes only on purpose (go test ./wire -update).
func TestGoldenBytes(t *testing.T) {
	spec := &optim.PhaseSpec{Name: "sgp", Rounds: 40, EvalEvery: 10, Step: 3, Tick: optim.Continue, Track: true,
		Offset: 20, Continued: true, Total: 60, States: [][]byte{{1, 2, 3}, nil}}
	shared := []float64{1.5, -0.25, 3e-300, 0}
	model := optim.Payload{Kind: optim.KindModel, Vec: shared, Mass: 0.5}
	late := []optim.LateMessage{
		{Due: 21, To: 4, Pushed: true, Msg: optim.Message{From: 0, Round: 19, Phase: "sgp", Weight: 0.5, Payload: model}},
		{Due: 22, To: 5, Pushed: true, Msg: optim.Message{From: 0, Round: 19, Phase: "sgp", Weight: 0.5, Payload: model}},
		{Due: 22, To: 5, Msg: optim.Message{From: 2, Round: 19, Phase: "sgp", Payload: optim.Payload{Kind: optim.KindDual, Vec: []float64{-1, 2}}}},
	}
	step := NewWorkerStep(7, 0, spec, 123, true, 4)
	step.Run, step.ContinueRecord = 99, true
	step.SetLate(late)
	golden(t, "workerstep", step)

	nw, err := (&graph.FullyConnected{}).Build(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	ports := make([]*optim.Port, 2)
	for i := range ports {
		ports[i] = optim.NewPort(nw, i)
		r := ports[i].Open("sgp", 19, 5)
		optim.Push(ports[i], r.Links, optim.Payload{Kind: optim.KindModel, Vec: []float64{float64(i), 0.25}, Mass: 0.5})
	}
	optim.Send(ports[1], []int{3}, optim.Payload{Kind: optim.KindControl, Vec: []float64{7}})
	golden(t, "peerbatch", NewPeerBatch(99, 7, 5, 0, ports, 2, 4))

	st := optim.Stats{TrainLoss: 0.5, TrainAcc: 0.75, ValLoss: 0.625, ValAcc: 0.5, TestN: 30, ValN: 20, TrainN: 100,
		X: []float64{1, 2, 3}, Weight: 0.125}
	a := NewWorkerAck(99, 7, 5, 1)
	a.AddStats(&st)
	a.AddStats(&optim.Stats{})
	a.AddResult(&optim.Result{State: []byte("state")})
	a.AddResult(&optim.Result{})
	a.Links = LinksDigest(LinksDigest(DigestStart, 2, []int{0, 2, 3}), 3, []int{3})
	a.Traffic = []int64{12, 960, 1, 0, 2, 4242}
	a.SetLate(late[1:])
	golden(t, "workerack", a)
	failed := NewWorkerAck(99, 7, 5, 1)
	failed.SetError(3, 24, errors.New("boom"))
	golden(t, "workerack-error", failed)
}

func golden(t *testing.T, name string, m proto.Message) {
	t.Helper()
	got := hex.EncodeToString(must(Marshal(m)))
	path := "testdata/" + name + ".hex"
	if *update {
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func TestWorkerStepRoundTrip(t *testing.T) {
	g := newGen(12)
	for range 200 {
		shared := g.payload()
		late := make([]optim.LateMessage, g.r.IntN(6))
		for k := range late {
			late[k] = optim.LateMessage{Due: uint64(g.int()), To: g.int(), Pushed: g.r.IntN(2) == 0, Msg: g.message()}
			if g.r.IntN(2) == 0 {
				late[k].Msg.Payload = shared
			}
		}
		var spec *optim.PhaseSpec
		if g.r.IntN(2) == 0 {
			spec = g.spec()
		}
		m := NewWorkerStep(3, 4, spec, 77, true, 5)
		m.SetLate(late)
		st := transit(t, m)
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
		got := must(st.OptimLate())
		if len(late) == 0 {
			late = nil
		}
		same(t, "late", late, got)
		var first *float64
		for k := range late {
			if len(shared.Vec) > 0 && len(late[k].Msg.Vec) > 0 && &late[k].Msg.Vec[0] == &shared.Vec[0] {
				if first == nil {
					first = &got[k].Msg.Vec[0]
				} else if &got[k].Msg.Vec[0] != first {
					t.Fatal("a shared payload was decoded twice")
				}
			}
		}
	}
}

// TestZeroPhaseCrosses checks that a phase whose fields are all zero still
// reaches the worker (the spec field has presence).
func TestZeroPhaseCrosses(t *testing.T) {
	st := transit(t, NewWorkerStep(1, 0, &optim.PhaseSpec{}, 0, false, 0))
	if p := must(st.OptimSpec()); p == nil {
		t.Fatal("a zero phase was lost")
	}
}

// A batch carries what the ports of a real round addressed to one block
// of receivers, and nothing else.
func TestPeerBatchRoundTrip(t *testing.T) {
	const n = 6
	nw, err := (&graph.FullyConnected{}).Build(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(11)
	for range 50 {
		ports := make([]*optim.Port, 3)
		for k := range ports {
			if g.r.IntN(4) == 0 {
				continue // a sender with no round opened
			}
			p := optim.NewPort(nw, k)
			r := p.Open("mix", 4, 99)
			optim.Push(p, r.Links, optim.Payload{Kind: optim.KindModel, Vec: g.vec(), Mass: g.float()})
			optim.Send(p, []int{g.r.IntN(n), g.r.IntN(n)}, g.payload())
			ports[k] = p
		}
		first, last := 2+g.r.IntN(2), 4+g.r.IntN(3)
		b := transit(t, NewPeerBatch(8, 3, 5, 1, ports, first, last))
		if b.GetRun() != 8 || b.GetEpoch() != 3 || b.GetStep() != 5 || b.GetFrom() != 1 {
			t.Fatalf("batch header: %v", b)
		}
		var want []Outbox
		for _, p := range ports {
			if p == nil {
				continue
			}
			o := Outbox{From: p.Round().Self}
			for _, e := range p.Envelopes() {
				if e.To >= first && e.To < last {
					o.Envelopes = append(o.Envelopes, e)
				}
			}
			if len(o.Envelopes) > 0 {
				want = append(want, o)
			}
		}
		got := must(b.OptimOutboxes())
		same(t, "outboxes", want, got)
		// A pushed vector crosses once per batch, and the envelopes that
		// carried it share it again after decoding.
		for _, o := range got {
			var pushed *float64
			for _, e := range o.Envelopes {
				if e.Pushed && len(e.Vec) > 0 {
					if pushed == nil {
						pushed = &e.Vec[0]
					} else if pushed != &e.Vec[0] {
						t.Fatal("the pushed envelopes do not share their decoded vector")
					}
				}
			}
		}
	}
}

func TestWorkerAckRoundTrip(t *testing.T) {
	g := newGen(13)
	for range 50 {
		stats := []optim.Stats{g.stats(), g.stats(), {}}
		res := []optim.Result{{Data: g.bytes(), State: g.bytes(), Stateless: g.name()}, {}, {Data: g.bytes()}}
		late := []optim.LateMessage{{Due: 3, To: 1, Pushed: true, Msg: g.message()}}
		m := NewWorkerAck(5, 3, 7, 2)
		for k := range stats {
			m.AddStats(&stats[k])
			m.AddResult(&res[k])
		}
		m.SetLate(late)
		a := transit(t, m)
		if a.GetRun() != 5 || a.GetEpoch() != 3 || a.GetStep() != 7 || a.GetWorker() != 2 || a.Err() != nil {
			t.Fatalf("ack header: %v", a)
		}
		gotStats, gotRes := make([]optim.Stats, 3), make([]optim.Result, 3)
		if err := a.OptimStats(gotStats); err != nil {
			t.Fatal(err)
		}
		if err := a.OptimResults(gotRes); err != nil {
			t.Fatal(err)
		}
		same(t, "stats", stats, gotStats)
		same(t, "results", res, gotRes)
		same(t, "late", late, must(a.OptimLate()))
		if err := a.OptimStats(make([]optim.Stats, 2)); err == nil {
			t.Fatal("stats of 3 clients decoded into 2")
		}
	}
	failed := NewWorkerAck(1, 2, 3, 0)
	failed.SetError(4, 9, fmt.Errorf("diverged: %w", optim.ErrNonFinite))
	a := transit(t, failed)
	if err := a.Err(); err == nil || err.Error() != "diverged: "+optim.ErrNonFinite.Error() || a.GetErrorClient() != 4 || a.GetErrorRound() != 9 {
		t.Fatalf("error: %v", a)
	}
	empty := NewWorkerAck(0, 0, 0, 0)
	empty.SetError(0, 0, errors.New(""))
	if err := transit(t, empty).Err(); err == nil {
		t.Fatal("an error with an empty text reads as success")
	}
}

// PeerParams keeps which clients have a vector (nil, empty or not) and
// every bit of the vectors; a message whose lengths do not add up fails.
func TestPeerParamsRoundTrip(t *testing.T) {
	g := newGen(17)
	xs := [][]float64{g.vec(), nil, {}, {g.float(), g.float()}, g.vec(), {math.NaN(), math.Inf(-1), math.Copysign(0, -1)}}
	m := transit(t, NewPeerParams(5, 3, 7, 2, xs))
	if m.GetRun() != 5 || m.GetEpoch() != 3 || m.GetStep() != 7 || m.GetFrom() != 2 {
		t.Fatalf("header: %v", m)
	}
	got, err := m.Vectors(len(xs))
	if err != nil {
		t.Fatal(err)
	}
	for k := range xs {
		if (xs[k] == nil) != (got[k] == nil) || len(xs[k]) != len(got[k]) {
			t.Fatalf("client %d: %v, want %v", k, got[k], xs[k])
		}
		for i := range xs[k] {
			if math.Float64bits(xs[k][i]) != math.Float64bits(got[k][i]) {
				t.Fatalf("client %d, coordinate %d: %v, want %v", k, i, got[k][i], xs[k][i])
			}
		}
	}
	if _, err := m.Vectors(len(xs) - 1); err == nil {
		t.Error("the vectors of 6 clients read as 5")
	}
	for _, bad := range []*PeerParams{{Lens: []int64{3}, Values: []float64{1, 2}}, {Lens: []int64{1}, Values: []float64{1, 2}}, {Lens: []int64{-2}}} {
		if _, err := bad.Vectors(1); err == nil {
			t.Errorf("lengths %v over %d values read", bad.Lens, len(bad.Values))
		}
	}
}

// The delivery record's columns copy back bit for bit, and only the
// worker's columns are written.
func TestRecordColumns(t *testing.T) {
	const n = 5
	g := newGen(14)
	src, dst := optim.NewDeliveryRecord(n), optim.NewDeliveryRecord(n)
	for i := range n {
		for j := range n {
			src.WeightSum[i][j], src.Count[i][j] = g.float(), g.float()
			dst.WeightSum[i][j], dst.Count[i][j] = -1, -1
		}
		src.Online[i], dst.Online[i] = g.float(), -1
	}
	first, last, err := ApplyRecordColumns(dst, NewRecordColumns(src, 1, 3))
	if err != nil || first != 1 || last != 3 {
		t.Fatalf("columns %d–%d: %v", first, last, err)
	}
	for i := range n {
		for j := range n {
			in := j >= 1 && j < 3
			if in != (math.Float64bits(dst.WeightSum[i][j]) == math.Float64bits(src.WeightSum[i][j])) ||
				in != (math.Float64bits(dst.Count[i][j]) == math.Float64bits(src.Count[i][j])) {
				t.Fatalf("entry %d→%d: %v, %v (source %v, %v)", i, j, dst.WeightSum[i][j], dst.Count[i][j], src.WeightSum[i][j], src.Count[i][j])
			}
		}
		if in := i >= 1 && i < 3; in != (math.Float64bits(dst.Online[i]) == math.Float64bits(src.Online[i])) {
			t.Fatalf("online %d: %v (source %v)", i, dst.Online[i], src.Online[i])
		}
	}
	if _, _, err := ApplyRecordColumns(optim.NewDeliveryRecord(2), NewRecordColumns(src, 1, 3)); err == nil {
		t.Fatal("the columns of 5 clients fitted a record of 2")
	}
}

// The digest tells links apart, and which client realized them.
func TestLinksDigest(t *testing.T) {
	a := LinksDigest(DigestStart, 1, []int{0, 1, 2})
	for _, other := range []uint64{
		LinksDigest(DigestStart, 1, []int{0, 1}),
		LinksDigest(DigestStart, 2, []int{0, 1, 2}),
		LinksDigest(DigestStart, 1, []int{0, 2, 1}),
		LinksDigest(LinksDigest(DigestStart, 1, []int{0, 1}), 2, nil),
	} {
		if other == a {
			t.Fatalf("digest %x for different links", a)
		}
	}
	if a != LinksDigest(DigestStart, 1, []int{0, 1, 2}) {
		t.Fatal("the digest is not a function of its input")
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
	box := codec.MustMarshal(&outbox{From: 1, Envelopes: []envelope{{Ref: 1}}})
	if _, err := (&PeerBatch{Payloads: []*Payload{{Kind: 256}}, Outboxes: [][]byte{box}}).OptimOutboxes(); err == nil {
		t.Error("payload kind 256 accepted")
	}
	if _, err := (&PeerBatch{Outboxes: [][]byte{box}}).OptimOutboxes(); err == nil {
		t.Error("a reference outside the payload table was accepted")
	}
	if _, err := (&PeerBatch{Payloads: []*Payload{{}}, Outboxes: [][]byte{box, box}}).OptimOutboxes(); err == nil {
		t.Error("two outboxes of one sender were accepted")
	}
	late := codec.MustMarshal(&lateList{Messages: []lateMessage{{Msg: delivery{Ref: -1}}}})
	if _, err := (&WorkerStep{Late: late}).OptimLate(); err == nil {
		t.Error("a negative reference was accepted")
	}
	if _, err := (&WorkerStep{Spec: []byte{0x0a, 0x05, 'a'}}).OptimSpec(); err == nil {
		t.Error("a truncated phase was accepted")
	}
	if err := (&WorkerAck{Stats: [][]byte{{0x08, 0x01}}}).OptimStats(make([]optim.Stats, 1)); err == nil {
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
	// A batch of k senders pushing to the same receivers: each vector once.
	nw, err := (&graph.FullyConnected{}).Build(k+2, 1)
	if err != nil {
		t.Fatal(err)
	}
	ports := make([]*optim.Port, k)
	for i := range ports {
		ports[i] = optim.NewPort(nw, i)
		r := ports[i].Open("lower", 17, 3)
		optim.Push(ports[i], r.Links, inbox[i].Payload)
	}
	b := NewPeerBatch(1, 12, 18, 0, ports, k, k+2)
	size := proto.Size(b)
	if size < k*8*d || size > k*(8*d+16+2*40) {
		t.Errorf("batch of %d senders with d = %d to 2 receivers: %d bytes", k, d, size)
	}
	if b := must(Marshal(b)); len(b) != size || !bytes.Equal(b, must(Marshal(NewPeerBatch(1, 12, 18, 0, ports, k, k+2)))) {
		t.Errorf("proto.Size %d, encoded %d, or two encodings differ", size, len(b))
	}
}

// A float32 payload crosses a peer batch bit for bit, once per batch and
// shared again by the envelopes that carried it, in half the bytes of the
// same vector in float64; a payload claiming both vectors is refused.
func TestFloat32PayloadCrosses(t *testing.T) {
	const n, d = 5, 1000
	nw, err := (&graph.FullyConnected{}).Build(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(17)
	batch := func(p optim.Payload) *PeerBatch {
		port := optim.NewPort(nw, 0)
		r := port.Open("sgp", 3, 7)
		optim.Push(port, r.Links, p)
		return NewPeerBatch(1, 2, 3, 0, []*optim.Port{port}, 1, n)
	}
	v32 := make([]float32, d)
	for k := range v32 {
		v32[k] = math.Float32frombits(g.r.Uint32())
	}
	v32[0], v32[1] = float32(math.Copysign(0, -1)), math.Float32frombits(0x7fa0_0001) // −0, a signalling NaN
	b32 := batch(optim.NewPayload(optim.KindModel, v32, 0.25))
	got := must(transit(t, b32).OptimOutboxes())
	if len(got) != 1 || len(got[0].Envelopes) != n-1 {
		t.Fatalf("decoded %d outboxes", len(got))
	}
	for _, e := range got[0].Envelopes {
		if e.Vec != nil || len(e.Vec32) != d || &e.Vec32[0] != &got[0].Envelopes[0].Vec32[0] || e.Mass != 0.25 {
			t.Fatalf("envelope to %d: %d float64, %d float32 elements, mass %v, shared %v", e.To, len(e.Vec), len(e.Vec32), e.Mass,
				len(e.Vec32) > 0 && &e.Vec32[0] == &got[0].Envelopes[0].Vec32[0])
		}
		for k := range v32 {
			if math.Float32bits(e.Vec32[k]) != math.Float32bits(v32[k]) {
				t.Fatalf("element %d: %#x, sent %#x", k, math.Float32bits(e.Vec32[k]), math.Float32bits(v32[k]))
			}
		}
	}
	v64 := make([]float64, d)
	s32, s64 := proto.Size(b32), proto.Size(batch(optim.NewPayload(optim.KindModel, v64, 0.25)))
	if s64-s32 != 4*d {
		t.Errorf("a batch of one %d-vector: %d bytes in float32, %d in float64; want %d fewer", d, s32, s64, 4*d)
	}
	both := transit(t, b32)
	both.Payloads[0].Vec = []float64{1}
	if _, err := both.OptimOutboxes(); err == nil {
		t.Error("a payload with both vectors was accepted")
	}
	inline := optim.Payload{Kind: optim.KindModel, Vec: []float64{1}, Vec32: []float32{1}}
	if err := resolve(&inline, 0, nil); err == nil {
		t.Error("an inline payload with both vectors was accepted")
	}
}
