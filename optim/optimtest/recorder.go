package optimtest

import (
	"testing"

	"hgpsim/optim"
)

// Recorder is an optim.Sink that keeps every evaluated round and every
// phase report, results included, each encoded when it arrives: the
// stats' vectors are views a later round overwrites.
type Recorder struct {
	T      *testing.T
	Events [][]byte
}

// Evaluation is what the Recorder keeps of an evaluated round.
type Evaluation struct {
	Phase          string
	Step, Round, N int
	Traffic        optim.Traffic
	Clients        []optim.Stats
}

// report is what the Recorder keeps of a phase report.
type report struct {
	Phase   string
	Step    int
	Traffic optim.Traffic
	Last    []optim.Stats
	Results []optim.Result
}

func (r *Recorder) keep(v any) error {
	b, err := optim.EncodeState(v)
	if err != nil {
		r.T.Fatal(err)
	}
	r.Events = append(r.Events, b)
	return nil
}

// Evaluated implements optim.Sink.
func (r *Recorder) Evaluated(ev *optim.RoundEvent) error {
	return r.keep(Evaluation{ev.Phase, ev.Step, ev.Round, ev.Rounds, ev.Traffic, ev.Clients})
}

// Finished implements optim.Sink.
func (r *Recorder) Finished(rep *optim.PhaseReport) error {
	return r.keep(report{rep.Spec.Name, rep.Spec.Step, rep.Traffic, rep.Last, rep.Results})
}

// Evaluations returns the clients' stats of every evaluated round, in
// order, each encoded without the phase's round numbering, so that runs
// cut into phases differently compare.
func (r *Recorder) Evaluations() [][]byte {
	var out [][]byte
	for _, e := range r.Events {
		var ev Evaluation
		if err := optim.DecodeState(e, &ev); err != nil || ev.Clients == nil {
			continue // a phase report
		}
		b, err := optim.EncodeState(ev.Clients)
		if err != nil {
			r.T.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
