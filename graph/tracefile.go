package graph

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
)

// A link trace lists, round by round, the changes of the directed links'
// states: a row says that from that round on the link from→to is up (with
// an optional delay in rounds) or down, until a later row for the same link
// says otherwise. Every link is down before its first row. Rounds are the
// run's communication rounds (ticks), counted from 0 across phases. The
// format is described for users in docs/scenarios.md; this file reads and
// writes it, streaming, so that memory does not grow with the trace.

// traceRow is one parsed line of a trace: a change, or nothing (a comment,
// the header, a directive).
type traceRow struct {
	round    uint64
	from, to int
	up       bool
	delay    int
}

// traceReader streams the rows of a trace file, checking each against the
// rules of the format; errors name the file and line.
type traceReader struct {
	name  string
	f     *os.File
	gz    *gzip.Reader
	br    *bufio.Reader
	line  int
	jsonl bool
	n     int // clients of the network the trace is read for

	header    bool        // the CSV header was read
	clients   int         // declared clients (0: not declared)
	rounds    uint64      // declared length (0: not declared)
	started   bool        // a change row was read
	round     uint64      // round of the last change row
	seen      map[int]int // the round's links → line, without last
	last      []uint32    // each link's last line, for n ≤ maxTally
	roundLine int         // line of the round's first row
	hasDelay  bool
}

// openTrace opens a trace for a network of n clients. Gzip is recognized
// by its magic bytes, JSONL by a first character '{'.
func openTrace(name string, n int) (*traceReader, error) {
	f, err := os.Open(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path comes first, as in every trace error
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &traceReader{name: name, f: f, n: n, seen: map[int]int{}}
	br := bufio.NewReaderSize(f, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		t.gz, err = gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: a damaged gzip header (the file starts as gzip does)", name)
		}
		br = bufio.NewReaderSize(t.gz, 1<<16)
	}
	t.br = br
	for {
		c, err := br.Peek(1)
		if err != nil || !(c[0] == ' ' || c[0] == '\t' || c[0] == '\r' || c[0] == '\n') {
			t.jsonl = err == nil && c[0] == '{'
			break
		}
		if c[0] == '\n' {
			t.line++
		}
		_, _ = br.ReadByte()
	}
	return t, nil
}

// Close releases the file.
func (t *traceReader) Close() error { return t.f.Close() }

// errorf returns an error at the current line, or of the file before
// its first line.
func (t *traceReader) errorf(format string, a ...any) error {
	if t.line == 0 {
		return fmt.Errorf("%s: %s", t.name, fmt.Sprintf(format, a...))
	}
	return fmt.Errorf("%s:%d: %s", t.name, t.line, fmt.Sprintf(format, a...))
}

// next reads the next change into row. It returns io.EOF after the last
// one, having checked the declared length.
func (t *traceReader) next(row *traceRow) error {
	for {
		b, err := t.br.ReadSlice('\n')
		if len(b) > 0 || err == nil {
			t.line++
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return t.errorf("line longer than %d bytes: not a links trace", t.br.Size())
		case errors.Is(err, io.ErrUnexpectedEOF):
			return t.errorf("truncated gzip stream")
		case err != nil && err != io.EOF:
			return t.errorf("reading: %v", err)
		}
		if t.header && !t.jsonl && fastRow(b, row, t.hasDelay) {
			return t.check(row)
		}
		s := bytes.TrimRight(b, "\r\n")
		if len(bytes.TrimSpace(s)) > 0 {
			ok, perr := t.parse(s, row)
			if perr != nil {
				return perr
			}
			if ok {
				return t.check(row)
			}
		}
		if err == io.EOF {
			if t.rounds > 0 && t.started && t.round >= t.rounds {
				return t.errorf("round %d is past the declared rounds=%d", t.round, t.rounds)
			}
			return io.EOF
		}
	}
}

// parse decodes one non-blank line; ok reports a change row.
func (t *traceReader) parse(s []byte, row *traceRow) (ok bool, err error) {
	if t.jsonl {
		return t.parseJSON(s, row)
	}
	if s[0] == '#' {
		if len(s) > 1 && s[1] == '!' {
			return false, t.directive(string(s[2:]))
		}
		return false, nil
	}
	if !t.header {
		h := strings.ReplaceAll(string(s), " ", "")
		switch h {
		case "round,from,to,up":
		case "round,from,to,up,delay":
			t.hasDelay = true
		default:
			return false, t.errorf("want the header round,from,to,up[,delay], got %q", clip(s))
		}
		t.header = true
		return false, nil
	}
	var f [5][]byte
	k := 0
	for rest := s; ; k++ {
		if k == len(f) {
			return false, t.errorf("too many fields in %q: want round,from,to,up[,delay]", clip(s))
		}
		i := bytes.IndexByte(rest, ',')
		if i < 0 {
			f[k] = rest
			k++
			break
		}
		f[k], rest = rest[:i], rest[i+1:]
	}
	if k < 4 || (k == 5 && !t.hasDelay) {
		return false, t.errorf("want round,from,to,up%s, got %q", map[bool]string{true: "[,delay]"}[t.hasDelay], clip(s))
	}
	var r, a, b, u, d uint64
	if r, ok = atou(f[0]); ok {
		if a, ok = atou(f[1]); ok {
			if b, ok = atou(f[2]); ok {
				u, ok = atou(f[3])
			}
		}
	}
	if ok && k == 5 && len(bytes.TrimSpace(f[4])) > 0 {
		d, ok = atou(f[4])
	}
	if !ok || u > 1 || a > MaxNodes || b > MaxNodes || d > MaxDelay {
		return false, t.errorf("not a change row (round,from,to,up[,delay] with up 0 or 1 and delay ≤ %d): %q", MaxDelay, clip(s))
	}
	*row = traceRow{round: r, from: int(a), to: int(b), up: u == 1, delay: int(d)}
	return true, nil
}

// jsonRow is a JSONL line: a directive (clients, rounds) or a change.
type jsonRow struct {
	Clients *int     `json:"clients"`
	Rounds  *uint64  `json:"rounds"`
	Round   *uint64  `json:"round"`
	From    *int     `json:"from"`
	To      *int     `json:"to"`
	Up      *jsonBit `json:"up"`
	Delay   *int     `json:"delay"`
}

// jsonBit is a link state: true/false or 1/0.
type jsonBit bool

func (b *jsonBit) UnmarshalJSON(s []byte) error {
	switch string(s) {
	case "true", "1":
		*b = true
	case "false", "0":
		*b = false
	default:
		return fmt.Errorf("up must be true, false, 1 or 0, got %s", s)
	}
	return nil
}

func (t *traceReader) parseJSON(s []byte, row *traceRow) (bool, error) {
	var j jsonRow
	dec := json.NewDecoder(bytes.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return false, t.errorf("not a links trace object: %v", err)
	}
	if dec.More() {
		return false, t.errorf("one JSON object per line, got more")
	}
	change := j.Round != nil || j.From != nil || j.To != nil || j.Up != nil || j.Delay != nil
	switch {
	case change && (j.Clients != nil || j.Rounds != nil):
		return false, t.errorf("a line is a change or a directive (clients, rounds), not both")
	case j.Clients != nil:
		return false, t.setClients(*j.Clients)
	case j.Rounds != nil:
		return false, t.setRounds(*j.Rounds)
	case j.Round == nil || j.From == nil || j.To == nil || j.Up == nil:
		return false, t.errorf("a change needs round, from, to and up")
	}
	d := 0
	if j.Delay != nil {
		d = *j.Delay
	}
	if *j.From < 0 || *j.To < 0 || *j.From > MaxNodes || *j.To > MaxNodes || d < 0 || d > MaxDelay {
		return false, t.errorf("from and to must be client ids ≥ 0 and delay in [0, %d]", MaxDelay)
	}
	*row = traceRow{round: *j.Round, from: *j.From, to: *j.To, up: bool(*j.Up), delay: d}
	if d > 0 {
		t.hasDelay = true
	}
	return true, nil
}

// directive reads the key=value pairs of a CSV "#!" line.
func (t *traceReader) directive(s string) error {
	for _, kv := range strings.Fields(s) {
		k, v, _ := strings.Cut(kv, "=")
		x, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return t.errorf("directive %q: want clients=N or rounds=R", kv)
		}
		switch k {
		case "clients":
			if x > MaxNodes {
				return t.errorf("clients=%d is more than %d", x, MaxNodes)
			}
			err = t.setClients(int(x))
		case "rounds":
			err = t.setRounds(x)
		default:
			return t.errorf("unknown directive %q: want clients=N or rounds=R", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *traceReader) setClients(c int) error {
	switch {
	case t.clients != 0 || t.started:
		return t.errorf("clients must be declared once, before the first change")
	case c < 2:
		return t.errorf("clients must be at least 2, got %d", c)
	case t.n > 0 && c != t.n:
		return t.errorf("the trace is for %d clients, the network has %d", c, t.n)
	}
	t.clients = c
	return nil
}

func (t *traceReader) setRounds(r uint64) error {
	switch {
	case t.rounds != 0:
		return t.errorf("rounds declared twice")
	case r == 0:
		return t.errorf("rounds must be at least 1")
	case t.started && t.round >= r:
		return t.errorf("rounds=%d, but round %d was listed", r, t.round)
	}
	t.rounds = r
	return nil
}

// check applies the rules that span lines: rounds in order, ids in range,
// no self-links, each link at most once a round.
func (t *traceReader) check(row *traceRow) error {
	n := t.n
	if n == 0 {
		n = t.clients
	}
	switch {
	case t.started && row.round < t.round:
		return t.errorf("rounds out of order: round %d after round %d", row.round, t.round)
	case t.rounds > 0 && row.round >= t.rounds:
		return t.errorf("round %d is past the declared rounds=%d", row.round, t.rounds)
	case row.from == row.to:
		return t.errorf("self-link %d→%d (a client always reaches itself; list only links between clients)", row.from, row.to)
	case n > 0 && (row.from >= n || row.to >= n):
		return t.errorf("link %d→%d: client ids must be in [0, %d)", row.from, row.to, n)
	case row.delay > 0 && !row.up:
		return t.errorf("link %d→%d: a delay on a link that is down", row.from, row.to)
	}
	newRound := !t.started || row.round != t.round
	t.started, t.round = true, row.round
	if newRound {
		t.roundLine = t.line
	}
	// Duplicates: with the network's size known, each link's last line in
	// an array (a line at or after the round's first is this round's);
	// otherwise a map of the round's links.
	if t.n > 0 && t.n <= maxTally && t.line <= math.MaxUint32 {
		if t.last == nil {
			t.last = make([]uint32, t.n*t.n)
		}
		k := row.from*t.n + row.to
		if first := int(t.last[k]); first >= t.roundLine && first > 0 {
			return t.errorf("duplicate entry for link %d→%d in round %d (first on line %d)", row.from, row.to, row.round, first)
		}
		t.last[k] = uint32(t.line)
		return nil
	}
	if newRound {
		// Clearing costs the map's capacity, which a crowded round (a
		// recording's round 0 lists every link up) would leave large.
		if len(t.seen) > 256 {
			t.seen = map[int]int{}
		} else {
			clear(t.seen)
		}
	}
	key := row.from*(MaxNodes+1) + row.to
	if first, dup := t.seen[key]; dup {
		return t.errorf("duplicate entry for link %d→%d in round %d (first on line %d)", row.from, row.to, row.round, first)
	}
	t.seen[key] = t.line
	return nil
}

// atou parses a decimal unsigned integer, allowing surrounding blanks.
func atou(b []byte) (uint64, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var x uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + uint64(c-'0')
	}
	return x, true
}

// clip shortens a line for an error message.
func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// fastRow parses a CSV change row written plainly — digits and commas,
// up 0 or 1, an optional delay, no blanks — in one pass, as a recording
// writes it; anything else is left to the general parser (false).
func fastRow(b []byte, row *traceRow, hasDelay bool) bool {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	var f [5]uint64
	k, digits := 0, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if digits == 18 {
				return false
			}
			f[k] = f[k]*10 + uint64(c-'0')
			digits++
		case c == ',' && digits > 0 && k < 4:
			k, digits = k+1, 0
		case c == ',' && k == 3 && digits == 0:
			return false
		default:
			return false
		}
	}
	switch {
	case k == 3 && digits > 0:
	case k == 4 && hasDelay: // an empty delay is 0
	default:
		return false
	}
	if f[3] > 1 || f[1] > MaxNodes || f[2] > MaxNodes || f[4] > MaxDelay {
		return false
	}
	*row = traceRow{round: f[0], from: int(f[1]), to: int(f[2]), up: f[3] == 1, delay: int(f[4])}
	return true
}
