package optim

import (
	"maps"
	"slices"
	"testing"
)

// eventLog records what a run reports, each event encoded at once (the
// stats' vectors are views), so that two runs compare bit for bit.
type eventLog struct{ events [][]byte }

func (l *eventLog) add(t *testing.T, v any) {
	b, err := EncodeState(v)
	if err != nil {
		t.Fatal(err)
	}
	l.events = append(l.events, b)
}

// eventSink records every evaluated round and every phase's report,
// results included.
type eventSink struct {
	t *testing.T
	l *eventLog
}

func (s eventSink) Evaluated(ev *RoundEvent) error {
	s.l.add(s.t, struct {
		Phase          string
		Step, Round, N int
		Traffic        Traffic
		Clients        []Stats
	}{ev.Phase, ev.Step, ev.Round, ev.Rounds, ev.Traffic, ev.Clients})
	return nil
}

func (s eventSink) Finished(rep *PhaseReport) error {
	s.l.add(s.t, struct {
		Phase   string
		Step    int
		Traffic Traffic
		Last    []Stats
		Results []sortedResult
	}{rep.Spec.Name, rep.Spec.Step, rep.Traffic, rep.Last, sortResults(rep.Results)})
	return nil
}

// sortedResult is a Result with its maps in key order (gob encodes a map
// in iteration order).
type sortedResult struct {
	Keys    []string
	Values  []float64
	Vectors [][]float64
	State   []byte
}

func sortResults(rs []Result) []sortedResult {
	out := make([]sortedResult, len(rs))
	for i, r := range rs {
		o := &out[i]
		for _, k := range slices.Sorted(maps.Keys(r.Values)) {
			o.Keys = append(o.Keys, k)
			o.Values = append(o.Values, r.Values[k])
		}
		for _, k := range slices.Sorted(maps.Keys(r.Vectors)) {
			o.Keys = append(o.Keys, k)
			o.Vectors = append(o.Vectors, r.Vectors[k])
		}
		o.State = r.State
	}
	return out
}
