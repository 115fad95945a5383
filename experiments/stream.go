package experiments

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"hgpsim/optim"
)

// A derived run's stream is what its sink received, one record per call,
// in a fixed binary encoding: a kind byte (recEvaluated, recFinished), the
// payload's length (uvarint) and the payload. Integers are varints, floats
// their IEEE-754 bits (8 bytes, little-endian: every bit kept, NaN
// payloads included), and a slice or byte string is its length + 1, or 0
// for nil, then its elements — so nil and empty read back as they were
// sent.
//
// Left out are what only a driver needs (a phase's Tick, which a run
// resumed from a checkpoint states where the original continued, its
// States, Late messages and Delivered input, a report's Late messages;
// they read back as zero) and the clients' parameter views Stats.X (n
// vectors of the model's size at every evaluation, which would make the
// record as large as the run's checkpoints many times over; no
// experiment reads them). Every part's Results are kept: an experiment
// may read the server's model at each evaluation. The live sink receives
// the events decoded from their record, never the driver's own, so a run
// and its replay feed an experiment exactly the same values.
const (
	recEvaluated = 'E'
	recFinished  = 'F'
)

// streamMagic opens a stream file; its number changes with the encoding.
const streamMagic = "hgpsim sink stream 2\n"

// appendRecord appends the record of one sink call, ev or rep, to b.
func appendRecord(b []byte, ev *optim.RoundEvent, rep *optim.PhaseReport) []byte {
	var e encoder
	kind := byte(recFinished)
	if ev != nil {
		kind = recEvaluated
		e.str(ev.Phase)
		e.int(ev.Step)
		e.int(ev.Round)
		e.int(ev.Rounds)
		e.traffic(ev.Traffic)
		e.stats(ev.Clients)
	} else {
		s := rep.Spec
		e.str(s.Name)
		e.int(s.Rounds)
		e.int(s.EvalEvery)
		e.int(s.Step)
		e.bytes(s.Args)
		e.len(len(s.PerClient), s.PerClient == nil)
		for _, a := range s.PerClient {
			e.bytes(a)
		}
		e.int(s.Offset)
		e.bool(s.Continued)
		e.int(s.Total)
		e.traffic(rep.Traffic)
		e.stats(rep.Last)
		e.len(len(rep.Results), rep.Results == nil)
		for _, r := range rep.Results {
			e.bytes(r.Data)
			e.bytes(r.State)
			e.str(r.Stateless)
		}
		d := rep.Delivered
		e.bool(d != nil)
		if d != nil {
			e.int(d.Rounds)
			e.matrix(d.WeightSum)
			e.matrix(d.Count)
			e.floats(d.Online)
		}
	}
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(len(e.b)))
	return append(b, e.b...)
}

// errShortRecord is a record cut off by the end of its stream (a run
// killed while writing it).
var errShortRecord = errors.New("a record cut off by the end of the stream")

// nextRecord decodes the record at the start of b and returns the bytes
// after it. Exactly one of ev and rep is set.
func nextRecord(b []byte) (ev *optim.RoundEvent, rep *optim.PhaseReport, rest []byte, err error) {
	if len(b) == 0 {
		return nil, nil, nil, errShortRecord
	}
	kind := b[0]
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)-1-k) {
		return nil, nil, nil, errShortRecord
	}
	d := decoder{b: b[1+k : 1+k+int(n)]}
	rest = b[1+k+int(n):]
	switch kind {
	case recEvaluated:
		ev = &optim.RoundEvent{Phase: d.str(), Step: d.int(), Round: d.int(), Rounds: d.int(), Traffic: d.traffic(), Clients: d.stats()}
	case recFinished:
		s := &optim.PhaseSpec{Name: d.str(), Rounds: d.int(), EvalEvery: d.int(), Step: d.int(), Args: d.bytes()}
		if m, ok := d.len(); ok {
			s.PerClient = make([][]byte, m)
			for i := range s.PerClient {
				s.PerClient[i] = d.bytes()
			}
		}
		s.Offset, s.Continued, s.Total = d.int(), d.bool(), d.int()
		rep = &optim.PhaseReport{Spec: s, Traffic: d.traffic(), Last: d.stats()}
		if m, ok := d.len(); ok {
			rep.Results = make([]optim.Result, m)
			for i := range rep.Results {
				rep.Results[i] = optim.Result{Data: d.bytes(), State: d.bytes(), Stateless: d.str()}
			}
		}
		if d.bool() {
			rep.Delivered = &optim.DeliveryRecord{Rounds: d.int(), WeightSum: d.matrix(), Count: d.matrix(), Online: d.floats()}
		}
	default:
		return nil, nil, nil, fmt.Errorf("a record of unknown kind %q", kind)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the end of a record", len(d.b))
	}
	if d.err != nil {
		return nil, nil, nil, d.err
	}
	return ev, rep, rest, nil
}

// send hands one decoded record to sink.
func send(sink optim.Sink, ev *optim.RoundEvent, rep *optim.PhaseReport) error {
	if ev != nil {
		return sink.Evaluated(ev)
	}
	return sink.Finished(rep)
}

type encoder struct{ b []byte }

func (e *encoder) int(v int)       { e.b = binary.AppendVarint(e.b, int64(v)) }
func (e *encoder) i64(v int64)     { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) float(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// len writes a slice's length, or nil.
func (e *encoder) len(n int, isNil bool) {
	if isNil {
		e.b = append(e.b, 0)
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(n)+1)
}

func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) bytes(v []byte) {
	e.len(len(v), v == nil)
	e.b = append(e.b, v...)
}

func (e *encoder) floats(v []float64) {
	e.len(len(v), v == nil)
	for _, x := range v {
		e.float(x)
	}
}

func (e *encoder) matrix(m [][]float64) {
	e.len(len(m), m == nil)
	for _, r := range m {
		e.floats(r)
	}
}

func (e *encoder) traffic(t optim.Traffic) {
	e.i64(t.Messages)
	e.i64(t.Bytes)
	e.i64(t.Dropped)
}

// stats writes every field of each Stats but X (see the encoding above).
func (e *encoder) stats(ss []optim.Stats) {
	e.len(len(ss), ss == nil)
	for _, s := range ss {
		for _, f := range [...]float64{s.TrainLoss, s.TrainAcc, s.ValLoss, s.ValAcc, s.TestLoss, s.TestAcc, s.OuterLoss, s.Weight} {
			e.float(f)
		}
		e.int(s.TrainN)
		e.int(s.ValN)
		e.int(s.TestN)
		e.floats(s.Hyper)
	}
}

// decoder reads what encoder wrote; the first error sticks and every read
// after it gives zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("a record shorter than its contents")
	}
	d.b = nil
}

func (d *decoder) i64() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) int() int { return int(d.i64()) }

func (d *decoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) float() float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) bool() bool {
	if len(d.b) < 1 {
		d.fail()
		return false
	}
	v := d.b[0] != 0
	d.b = d.b[1:]
	return v
}

// len reads a slice's length; ok is false for nil. A length beyond what
// is left (each element takes at least a byte) is an error, not an
// allocation.
func (d *decoder) len() (int, bool) {
	n := d.uvarint()
	if n == 0 {
		return 0, false
	}
	if n-1 > uint64(len(d.b)) {
		d.fail()
		return 0, false
	}
	return int(n - 1), true
}

func (d *decoder) take(n int) []byte {
	if n > len(d.b) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	return string(d.take(int(n)))
}

func (d *decoder) bytes() []byte {
	n, ok := d.len()
	if !ok {
		return nil
	}
	return append([]byte{}, d.take(n)...)
}

func (d *decoder) floats() []float64 {
	n, ok := d.len()
	if !ok {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = d.float()
	}
	return v
}

func (d *decoder) matrix() [][]float64 {
	n, ok := d.len()
	if !ok {
		return nil
	}
	m := make([][]float64, n)
	for i := range m {
		m[i] = d.floats()
	}
	return m
}

func (d *decoder) traffic() optim.Traffic {
	return optim.Traffic{Messages: d.i64(), Bytes: d.i64(), Dropped: d.i64()}
}

func (d *decoder) stats() []optim.Stats {
	n, ok := d.len()
	if !ok {
		return nil
	}
	ss := make([]optim.Stats, n)
	for i := range ss {
		s := &ss[i]
		s.TrainLoss, s.TrainAcc, s.ValLoss, s.ValAcc = d.float(), d.float(), d.float(), d.float()
		s.TestLoss, s.TestAcc, s.OuterLoss, s.Weight = d.float(), d.float(), d.float(), d.float()
		s.TrainN, s.ValN, s.TestN = d.int(), d.int(), d.int()
		s.Hyper = d.floats()
	}
	return ss
}
