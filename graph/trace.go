package graph

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

func init() {
	LinkProcesses.Register("trace",
		"Recorded or measured link behaviour: each round's link states are read from a file (CSV or JSONL, gzip accepted) that lists only changes — from this round on, link from→to is up (optionally with a delay) or down (docs/scenarios.md). The file is streamed, so memory does not grow with its length; `end` says what happens when the run outlives it. It decides the links whose δ̄ is strictly between 0 and 1 (links with δ̄ = 1 stay up), and the failure processes still apply on top. hgpsim run --record-links writes such a file, --replay-links replays it.",
		func() LinkProcess { return &Trace{End: "fail"} })
}

// Trace is the `trace` link process: link states read from a file. The
// parameters are plain data; Build binds them to the network (Bind), which
// checks the whole file before the run and streams it during the run.
type Trace struct {
	File string `yaml:"file" doc:"the trace file (.csv, .jsonl, either gzip-compressed); a relative path is taken from the working directory, and every worker process opens the same path"`
	End  string `yaml:"end" doc:"when the run outlives the trace: loop (start over), hold (keep the last round's states) or fail (the run fails)"`
}

// Example implements registry.Exampler: a trace needs its file.
func (*Trace) Example() string {
	return `clients: 4
network: {kind: stochastic-directed, links: {kind: trace, file: docs/links-example.csv, end: loop}}
data: {train: 20, val: 10, test: 10}
sgp: {rounds: 30, batch: 8, eval_every: 10}
`
}

// Validate implements LinkProcess. The file is read by Bind.
func (tr *Trace) Validate() error {
	if tr.File == "" {
		return fmt.Errorf("file: name the trace file")
	}
	switch tr.End {
	case "loop", "hold", "fail":
		return nil
	}
	return fmt.Errorf("end must be loop, hold or fail, got %q", tr.End)
}

// Up implements LinkProcess for an unbound trace: it is never called,
// since Build replaces the parameters by the bound process.
func (tr *Trace) Up(uint64, int, int, float64, uint64) bool {
	panic("graph: trace link process used without Build binding it to a network")
}

// Binder is implemented by link processes that need the network before
// the first round (its size, its links); Build calls Bind once the
// expected graph is built and installs the process Bind returns, leaving
// the parameters untouched (a scenario may be built more than once).
type Binder interface {
	Bind(nw *Network) (LinkProcess, error)
}

// Bind implements Binder: one pass over the whole file checks every row
// (so that a bad trace fails before anything is written) and finds its
// length; the expected graph the trace realizes — the links of nw with
// δ̄ = 1, and those with 0 < δ̄ < 1 that the trace has up at least once —
// must meet Assumptions 2 and 6 like any network.
func (tr *Trace) Bind(nw *Network) (LinkProcess, error) {
	sum, err := ScanTrace(tr.File, nw.N, false)
	if err != nil {
		return nil, err
	}
	if err := CheckTraceGraph(nw, sum); err != nil {
		return nil, fmt.Errorf("%s: %w", tr.File, err)
	}
	return &boundTrace{params: *tr, n: nw.N, length: sum.Rounds, delays: sum.Delays}, nil
}

// CheckTraceGraph checks the expected graph nw realizes with the trace
// sum describes (see Trace.Bind) against Assumptions 2 and 6, naming
// clients.
func CheckTraceGraph(nw *Network, sum *TraceSummary) error {
	n := nw.N
	ever := make(map[int]bool, len(sum.Links))
	for _, l := range sum.Links {
		ever[l] = true
	}
	g := newSparseNetwork(n, nil)
	for i := range n {
		js, ps := nw.outRow(i)
		for k, j := range js {
			if p := ps[k]; i != j && (p >= 1 || (p > 0 && ever[i*n+j])) {
				g.setLink(i, j, 1)
			}
		}
	}
	g.sortLinks()
	if err := g.checkStronglyConnected(); err != nil {
		return fmt.Errorf("with this trace, the %s", strings.TrimPrefix(err.Error(), "graph: "))
	}
	for i := range n {
		for _, j := range g.out[i] {
			if g.Delta(j, i) == 0 {
				return fmt.Errorf("with this trace, assumption 6 is violated: link %d→%d is up in some round but %d→%d never is", i, j, j, i)
			}
		}
	}
	return nil
}

// boundTrace is a Trace bound to a network: the link process a run uses.
//
// Up must behave as a pure function of its arguments although the states
// come from a stream. The drivers ask about one tick at a time from many
// goroutines (the clients' ports, in actors or worker processes), ticks
// increase through a run, and a tick is asked about many times. So the
// states of the current stretch of rounds without changes are published
// as an immutable snapshot behind an atomic pointer: a query for a tick in
// that stretch is one atomic load and a bit test, and only a query outside
// it takes the lock, advances the stream to that tick and publishes a new
// snapshot. A query for an earlier tick (a loop, a caller going back)
// reopens the file and reads it again from the start, so every answer
// depends on the tick alone, never on who asked first; memory holds two
// states whatever the file's length.
type boundTrace struct {
	params Trace
	n      int
	length uint64 // rounds the trace covers
	delays bool

	cur atomic.Pointer[traceState]
	mu  sync.Mutex
	st  *traceStream // guarded by mu
}

// traceState is the link states of rounds [from, to): immutable once
// published.
type traceState struct {
	from, to uint64
	up       []uint64    // bit from·n + to
	delay    map[int]int // from·n + to → rounds, links with a delay only
}

// traceStream is the open file and the states after the rows read so far.
type traceStream struct {
	r       *traceReader
	row     traceRow // the next row, not applied yet
	pending bool
	last    uint64 // round of the last applied row
	up      []uint64
	delay   map[int]int
}

// Up implements LinkProcess: the state of link a→b at tick.
func (bt *boundTrace) Up(_ uint64, a, b int, _ float64, tick uint64) bool {
	s := bt.state(tick)
	k := a*bt.n + b
	return s.up[k>>6]&(1<<(k&63)) != 0
}

// LinkDelay returns the delay the trace gives link a→b at tick.
func (bt *boundTrace) LinkDelay(a, b int, tick uint64) int {
	if !bt.delays {
		return 0
	}
	return bt.state(tick).delay[a*bt.n+b]
}

func (bt *boundTrace) delaysMessages() bool { return bt.delays }

// Rounds returns the rounds the trace covers.
func (bt *boundTrace) Rounds() uint64 { return bt.length }

// FailsPastEnd reports whether a run may not outlive the trace.
func (bt *boundTrace) FailsPastEnd() bool { return bt.params.End == "fail" }

// File returns the trace's file.
func (bt *boundTrace) File() string { return bt.params.File }

// state returns the snapshot holding tick, mapped into the trace by the
// end policy.
func (bt *boundTrace) state(tick uint64) *traceState {
	if tick >= bt.length {
		if bt.params.End == "loop" {
			tick %= bt.length
		} else {
			tick = bt.length - 1
		}
	}
	if s := bt.cur.Load(); s != nil && tick >= s.from && tick < s.to {
		return s
	}
	return bt.advance(tick)
}

// advance moves the stream to tick and publishes its snapshot. A failure
// to read the file here means it changed since Bind checked it: there is
// no correct answer to give, so it panics, which the drivers report as a
// failed run naming the client, phase and round.
func (bt *boundTrace) advance(tick uint64) *traceState {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	if s := bt.cur.Load(); s != nil && tick >= s.from && tick < s.to {
		return s // another goroutine got here first
	}
	if bt.st == nil || tick < bt.st.last {
		bt.reopen()
	}
	st := bt.st
	for st.pending && st.row.round <= tick {
		k := st.row.from*bt.n + st.row.to
		if st.row.up {
			st.up[k>>6] |= 1 << (k & 63)
		} else {
			st.up[k>>6] &^= 1 << (k & 63)
		}
		if st.row.delay > 0 {
			st.delay[k] = st.row.delay
		} else if bt.delays {
			delete(st.delay, k)
		}
		st.last = st.row.round
		err := st.r.next(&st.row)
		if err == io.EOF {
			st.pending = false
			break
		}
		if err != nil {
			panic(fmt.Sprintf("links trace changed since the run started: %v", err))
		}
	}
	s := &traceState{from: st.last, to: bt.length, up: append([]uint64(nil), st.up...)}
	if st.pending {
		s.to = st.row.round
	}
	if len(st.delay) > 0 {
		s.delay = make(map[int]int, len(st.delay))
		for k, d := range st.delay {
			s.delay[k] = d
		}
	}
	bt.cur.Store(s)
	return s
}

// reopen starts the stream over at round 0.
func (bt *boundTrace) reopen() {
	if bt.st != nil {
		bt.st.r.Close()
	}
	r, err := openTrace(bt.params.File, bt.n)
	if err != nil {
		panic(fmt.Sprintf("links trace changed since the run started: %v", err))
	}
	st := &traceStream{r: r, up: make([]uint64, (bt.n*bt.n+63)/64), delay: map[int]int{}}
	switch err := r.next(&st.row); err {
	case nil:
		st.pending = true
	case io.EOF:
	default:
		panic(fmt.Sprintf("links trace changed since the run started: %v", err))
	}
	bt.st = st
}

// Validate implements LinkProcess.
func (bt *boundTrace) Validate() error { return bt.params.Validate() }

// LinkTrace is implemented by the process Build installs for a trace.
type LinkTrace interface {
	LinkProcess
	// Rounds returns the rounds the trace covers.
	Rounds() uint64
	// FailsPastEnd reports whether a run may not outlive the trace.
	FailsPastEnd() bool
	// File returns the trace's file.
	File() string
}
