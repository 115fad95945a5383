package optimtest

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"hgpsim/optim"
)

// StatefulOf returns the optim.Stateful holding c's state: c itself, or
// the behaviour an *optim.Fixed runs.
func StatefulOf(t *testing.T, c optim.Client) optim.Stateful {
	t.Helper()
	if s, ok := c.(optim.Stateful); ok {
		return s
	}
	if f, ok := c.(*optim.Fixed); ok {
		if s, ok := f.Behaviour.(optim.Stateful); ok {
			return s
		}
	}
	t.Fatalf("%T is not Stateful", c)
	return nil
}

// Execute plans alg on s, builds its clients (each passed through wrap
// when wrap is not nil), runs prog (Plan's program when nil) on a fresh
// sequential driver with sink (optim.NoSink when nil) and returns the
// clients the driver ran and the traffic.
func Execute(t *testing.T, alg optim.Algorithm, s *optim.Setup, prog optim.Program, sink optim.Sink, wrap func(i int, c optim.Client) optim.Client) ([]optim.Client, optim.Traffic) {
	t.Helper()
	factory, planned, err := alg.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if prog == nil {
		prog = planned
	}
	if sink == nil {
		sink = optim.NoSink{}
	}
	clients := make([]optim.Client, s.Net.N)
	d, err := optim.NewSequential(s.Net, func(i int) (optim.Client, error) {
		c, err := factory(i)
		if err == nil && wrap != nil {
			c = wrap(i, c)
		}
		clients[i] = c
		return c, err
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := d.Execute(context.Background(), prog, sink)
	if err != nil {
		t.Fatal(err)
	}
	return clients, tr
}

// Run builds alg's clients on s, loads states into them (when not nil),
// runs phases on a fresh sequential driver and returns what the run
// reported and every client's state after it.
func Run(t *testing.T, alg optim.Algorithm, s *optim.Setup, phases optim.Phases, states [][]byte) (*Recorder, [][]byte) {
	t.Helper()
	rec := &Recorder{T: t}
	clients, _ := Execute(t, alg, s, &phases, rec, func(i int, c optim.Client) optim.Client {
		if i < len(states) {
			if err := StatefulOf(t, c).LoadState(states[i]); err != nil {
				t.Fatalf("client %d: %v", i, err)
			}
		}
		return c
	})
	out := make([][]byte, len(clients))
	for i, c := range clients {
		var err error
		if out[i], err = StatefulOf(t, c).SaveState(); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	return rec, out
}

// Parts returns the state holders of alg's first n clients, freshly built
// on s.
func Parts(t *testing.T, alg optim.Algorithm, s *optim.Setup, n int) []optim.Stateful {
	t.Helper()
	factory, _, err := alg.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]optim.Stateful, n)
	for i := range out {
		c, err := factory(i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = StatefulOf(t, c)
	}
	return out
}

// CutAt returns phase p cut after round c into two parts that run, one
// after the other, as p does (optim.SplitPhase's kind, at any round).
func CutAt(p optim.PhaseSpec, c int) (a, b optim.PhaseSpec) {
	a, b = p, p
	a.Rounds, a.Continued, a.Total = c, true, p.Rounds
	b.Offset, b.Rounds, b.Total = c, p.Rounds-c, p.Rounds
	return a, b
}

// CheckResumeAtEveryRound cuts the phase main (run after the phases pre)
// after each of its rounds, saves every client after the first part, loads
// the states into freshly built clients (setup gives a fresh setup) and
// runs the second part on a fresh driver: the events and final states must
// be those of one driver running both parts. A cut at an outer-iteration
// boundary (a multiple of period) that is an evaluated round is also
// checked against the evaluations of the uncut run.
func CheckResumeAtEveryRound(t *testing.T, alg optim.Algorithm, setup func() *optim.Setup, pre []optim.PhaseSpec, main optim.PhaseSpec, period int) {
	t.Helper()
	preRounds := 0
	for _, p := range pre {
		preRounds += p.Rounds
	}
	uncut, _ := Run(t, alg, setup(), append(append(optim.Phases(nil), pre...), main), nil)
	uncutEvals := uncut.Evaluations()
	for cut := 1; cut < main.Rounds; cut++ {
		a, b := CutAt(main, cut)
		ref, refStates := Run(t, alg, setup(), append(append(optim.Phases(nil), pre...), a, b), nil)
		first, states := Run(t, alg, setup(), append(append(optim.Phases(nil), pre...), a), nil)
		b.Tick = int64(preRounds + cut)
		second, gotStates := Run(t, alg, setup(), optim.Phases{b}, states)
		got := append(append([][]byte(nil), first.Events...), second.Events...)
		if len(got) != len(ref.Events) {
			t.Fatalf("cut after round %d: %d events, want %d", cut, len(got), len(ref.Events))
		}
		for e := range got {
			if !bytes.Equal(got[e], ref.Events[e]) {
				t.Fatalf("cut after round %d: event %d of %d differs", cut, e, len(got))
			}
		}
		for i := range refStates {
			if !bytes.Equal(gotStates[i], refStates[i]) {
				t.Fatalf("cut after round %d: client %d's final state differs", cut, i)
			}
		}
		if cut%period == 0 && main.ShouldEval(cut-1) {
			if ev := ref.Evaluations(); !slices.EqualFunc(ev, uncutEvals, bytes.Equal) {
				t.Fatalf("cut after round %d: the evaluations differ from the uncut run's", cut)
			}
		}
	}
}
