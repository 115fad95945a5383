package graph

import (
	"bufio"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
)

// maxTally bounds the clients for which a TraceRecorder counts each
// link's up rounds (n² counters).
const maxTally = 2000

// TraceRecorder writes what a network realizes, round by round, as a
// change-only links trace (the format Trace reads): the links Realize
// returns — after the failure processes, so a cut link or one to an
// offline client is down — and, when messages can be late, each up
// link's delay. Replaying the trace with the same failure processes gives
// the same realizations, since applying a failure to links it already
// took down changes nothing. It is not safe for concurrent use.
type TraceRecorder struct {
	nw     *Network
	w      *bufio.Writer
	jsonl  bool
	delays bool
	next   uint64 // first round not recorded yet
	prev   []uint64
	cur    []uint64
	prevD  map[int]int
	curD   map[int]int
	recv   []int
	chg    []int
	line   []byte
	tally  []uint64 // up rounds per link, n ≤ maxTally
	err    error
}

// NewTraceRecorder returns a recorder writing to w (CSV, or JSONL with
// jsonl) for the clients of nw, having written the header.
func NewTraceRecorder(w io.Writer, nw *Network, jsonl bool) *TraceRecorder {
	n := nw.N
	r := &TraceRecorder{nw: nw, w: bufio.NewWriterSize(w, 1<<16), jsonl: jsonl, delays: nw.Delays(),
		prev: make([]uint64, (n*n+63)/64), cur: make([]uint64, (n*n+63)/64), prevD: map[int]int{}, curD: map[int]int{}}
	if n <= maxTally {
		r.tally = make([]uint64, n*n)
	}
	if jsonl {
		fmt.Fprintf(r.w, "{\"clients\":%d}\n", n)
		return r
	}
	fmt.Fprintf(r.w, "# hgpsim links trace: the links realized in each round, as changes (docs/scenarios.md)\n#! clients=%d\n", n)
	if r.delays {
		r.w.WriteString("round,from,to,up,delay\n")
	} else {
		r.w.WriteString("round,from,to,up\n")
	}
	return r
}

// Comment writes a comment line (CSV only; JSONL has none).
func (r *TraceRecorder) Comment(s string) {
	if !r.jsonl && r.err == nil {
		_, r.err = fmt.Fprintf(r.w, "# %s\n", s)
	}
}

// Next returns the first round not recorded yet.
func (r *TraceRecorder) Next() uint64 { return r.next }

// RecordTo records the rounds from Next up to end (exclusive).
func (r *TraceRecorder) RecordTo(end uint64) error {
	n := r.nw.N
	for ; r.next < end && r.err == nil; r.next++ {
		tick := r.next
		clear(r.cur)
		clear(r.curD)
		for i := range n {
			r.recv = r.nw.Realize(i, tick, r.recv)
			for _, j := range r.recv {
				if j == i {
					continue
				}
				k := i*n + j
				r.cur[k>>6] |= 1 << (k & 63)
				if r.tally != nil {
					r.tally[k]++
				}
				if r.delays {
					if d := r.nw.Delay(i, j, tick); d > 0 {
						r.curD[k] = d
					}
				}
			}
		}
		r.chg = r.chg[:0]
		for w, x := range r.cur {
			for d := x ^ r.prev[w]; d != 0; d &= d - 1 {
				r.chg = append(r.chg, w*64+bits.TrailingZeros64(d))
			}
		}
		if r.delays {
			for k, d := range r.curD {
				if r.prevD[k] != d {
					r.chg = append(r.chg, k)
				}
			}
			for k := range r.prevD {
				if _, ok := r.curD[k]; !ok && r.cur[k>>6]&(1<<(k&63)) != 0 {
					r.chg = append(r.chg, k)
				}
			}
			slices.Sort(r.chg)
			r.chg = slices.Compact(r.chg)
		}
		for _, k := range r.chg {
			r.row(tick, k/n, k%n, r.cur[k>>6]&(1<<(k&63)) != 0, r.curD[k])
		}
		r.prev, r.cur = r.cur, r.prev
		r.prevD, r.curD = r.curD, r.prevD
	}
	return r.err
}

// row writes one change.
func (r *TraceRecorder) row(tick uint64, from, to int, up bool, delay int) {
	b := r.line[:0]
	u := byte('0')
	if up {
		u = '1'
	}
	if r.jsonl {
		b = append(b, `{"round":`...)
		b = strconv.AppendUint(b, tick, 10)
		b = append(b, `,"from":`...)
		b = strconv.AppendInt(b, int64(from), 10)
		b = append(b, `,"to":`...)
		b = strconv.AppendInt(b, int64(to), 10)
		b = append(b, `,"up":`...)
		b = append(b, u)
		if delay > 0 {
			b = append(b, `,"delay":`...)
			b = strconv.AppendInt(b, int64(delay), 10)
		}
		b = append(b, "}\n"...)
	} else {
		b = strconv.AppendUint(b, tick, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(from), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(to), 10)
		b = append(b, ',', u)
		if r.delays {
			b = append(b, ',')
			if delay > 0 {
				b = strconv.AppendInt(b, int64(delay), 10)
			}
		}
		b = append(b, '\n')
	}
	r.line = b
	if _, err := r.w.Write(b); err != nil && r.err == nil {
		r.err = err
	}
}

// Close writes the trace's length (the rounds recorded) and flushes; it
// does not close the underlying writer.
func (r *TraceRecorder) Close() error {
	if r.err != nil {
		return r.err
	}
	if r.next == 0 {
		return fmt.Errorf("links trace: no rounds were recorded")
	}
	if r.jsonl {
		fmt.Fprintf(r.w, "{\"rounds\":%d}\n", r.next)
	} else {
		fmt.Fprintf(r.w, "#! rounds=%d\n", r.next)
	}
	return r.w.Flush()
}

// Availability returns, for each ordered pair, the share of the recorded
// rounds its link was up, or nil when the network is too large to count
// (more than 2,000 clients).
func (r *TraceRecorder) Availability() [][]float64 {
	if r.tally == nil || r.next == 0 {
		return nil
	}
	n := r.nw.N
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
		for j := range a[i] {
			a[i][j] = float64(r.tally[i*n+j]) / float64(r.next)
		}
	}
	return a
}
