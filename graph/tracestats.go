package graph

import (
	"fmt"
	"io"
	"slices"
)

// TraceSummary is what a full pass over a trace finds.
type TraceSummary struct {
	Clients int    // declared or, when not declared, the largest id + 1
	Rounds  uint64 // declared, or the last listed round + 1
	Changes int64  // change rows
	Delays  bool   // some link has a delay
	// Links lists the directed links that are up at least once, as
	// from·Clients + to, ascending. With stats, Up[k] is the number of
	// rounds link Links[k] is up, and Outages[k] and OutageRounds[k] count
	// its down periods (leading and trailing ones included) and their
	// rounds.
	Links        []int
	Up           []uint64
	Outages      []uint64
	OutageRounds []uint64
}

// ScanTrace reads a whole trace for a network of n clients (0: as the
// trace declares or implies), checking every row, and returns what it
// found; with stats it also counts each link's up rounds and outages.
// Memory grows with the links listed, not with the rounds. Errors name
// the file and line.
func ScanTrace(name string, n int, stats bool) (*TraceSummary, error) {
	t, err := openTrace(name, n)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	type linkStat struct {
		up           bool
		ever         bool
		since        uint64 // round of the last change of state
		upRounds     uint64
		outages      uint64
		outageRounds uint64
	}
	per := map[int]*linkStat{}
	s := &TraceSummary{}
	maxID := -1
	var row traceRow
	for {
		err := t.next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		s.Changes++
		maxID = max(maxID, row.from, row.to)
		key := row.from*(MaxNodes+1) + row.to
		ls := per[key]
		if ls == nil {
			if !row.up {
				continue // down, as it was
			}
			ls = &linkStat{}
			per[key] = ls
		}
		if row.up == ls.up {
			continue
		}
		if ls.up {
			ls.upRounds += row.round - ls.since
		} else if row.round > ls.since {
			ls.outages++
			ls.outageRounds += row.round - ls.since
		}
		ls.up, ls.ever, ls.since = row.up, true, row.round
	}
	s.Clients = t.clients
	if s.Clients == 0 {
		s.Clients = max(n, maxID+1)
	}
	if s.Clients < 2 {
		return nil, fmt.Errorf("%s: no change row (a trace needs one at least)", name)
	}
	s.Rounds = t.rounds
	if s.Rounds == 0 {
		if !t.started {
			return nil, fmt.Errorf("%s: no change row and no rounds directive (an empty trace?)", name)
		}
		s.Rounds = t.round + 1
	}
	s.Delays = t.hasDelay
	keys := make([]int, 0, len(per))
	for key, ls := range per {
		if ls.up {
			ls.upRounds += s.Rounds - ls.since
		} else if s.Rounds > ls.since {
			ls.outages++
			ls.outageRounds += s.Rounds - ls.since
		}
		if ls.upRounds > 0 {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		s.Links = append(s.Links, key/(MaxNodes+1)*s.Clients+key%(MaxNodes+1))
		if stats {
			ls := per[key]
			s.Up = append(s.Up, ls.upRounds)
			s.Outages = append(s.Outages, ls.outages)
			s.OutageRounds = append(s.OutageRounds, ls.outageRounds)
		}
	}
	return s, nil
}

// String reports the trace's statistics on one line: the links up at some
// point, their availability (share of the rounds up: min, mean, max) and
// the mean length of their outages. It needs ScanTrace's stats.
func (s *TraceSummary) String() string {
	head := fmt.Sprintf("%d clients, %d rounds, %d changes", s.Clients, s.Rounds, s.Changes)
	if len(s.Up) == 0 {
		return head + "; no link is ever up"
	}
	lo, hi, sum := 1.0, 0.0, 0.0
	var outages, outageRounds uint64
	for k, u := range s.Up {
		a := float64(u) / float64(s.Rounds)
		lo, hi, sum = min(lo, a), max(hi, a), sum+a
		outages += s.Outages[k]
		outageRounds += s.OutageRounds[k]
	}
	out := "no outages"
	if outages > 0 {
		out = fmt.Sprintf("%d outages of mean length %.3g rounds", outages, float64(outageRounds)/float64(outages))
	}
	delays := ""
	if s.Delays {
		delays = "; with delays"
	}
	return fmt.Sprintf("%s; %d links up at some point, availability min %.3g, mean %.3g, max %.3g; %s%s",
		head, len(s.Up), lo, sum/float64(len(s.Up)), hi, out, delays)
}
