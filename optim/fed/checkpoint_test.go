package fed

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
)

// The algorithms that run their training as one long phase are
// checkpointed between its rounds. These tests cut the phase into two
// parts, save every client after the first, load the states into freshly
// built clients and run the second part on a fresh driver: the events and
// final states must be those of one driver running both parts.

type resumeCase struct {
	alg   optim.Algorithm
	setup func(t *testing.T) *optim.Setup
}

func resumeCases() map[string]resumeCase {
	star := &graph.Star{Prob: 1, ToHub: 0.7, FromHub: 0.85}
	avg := FedAvg{Rounds: 6, Participation: 0.5, LocalSteps: 2, LR: 0.1, Batch: 8, EvalEvery: 2}
	avgSetup := func(t *testing.T) *optim.Setup { return fedAvgSetup(t, 4, star) }
	return map[string]resumeCase{
		"fedavg":  {&avg, avgSetup},
		"fedprox": {&FedProx{FedAvg: avg, Mu: 0.3}, avgSetup},
	}
}

// mainPhase is the case's training as one phase (Plan's program may cut
// it into parts).
func mainPhase(t *testing.T, c resumeCase) optim.PhaseSpec {
	t.Helper()
	_, prog, err := c.alg.Plan(c.setup(t))
	if err != nil {
		t.Fatal(err)
	}
	p := *prog.(*optim.Phases)
	whole := p[0]
	whole.Rounds, whole.Continued, whole.Offset, whole.Total = whole.TotalRounds(), false, 0, 0
	return whole
}

// cutAt returns the phase cut after round c into two parts.
func cutAt(main optim.PhaseSpec, c int) (a, b optim.PhaseSpec) {
	a, b = main, main
	a.Rounds, a.Continued, a.Total = c, true, main.Rounds
	b.Offset, b.Rounds, b.Total = c, main.Rounds-c, main.Rounds
	return a, b
}

// statefulOf returns what holds the state of a client of this package.
func statefulOf(t *testing.T, c optim.Client) optim.Stateful {
	t.Helper()
	f, ok := c.(*optim.Fixed)
	if !ok {
		t.Fatalf("client %T is not Fixed", c)
	}
	st, ok := f.Behaviour.(optim.Stateful)
	if !ok {
		t.Fatalf("behaviour %T is not Stateful", f.Behaviour)
	}
	return st
}

// logSink records every evaluation and phase report as text (%v prints a
// float64 exactly and maps in key order).
type logSink struct{ events []string }

func (l *logSink) Evaluated(ev *optim.RoundEvent) error {
	l.events = append(l.events, fmt.Sprintf("%s %d %+v %+v", ev.Phase, ev.Round, ev.Traffic, ev.Clients))
	return nil
}

func (l *logSink) Finished(rep *optim.PhaseReport) error {
	l.events = append(l.events, fmt.Sprintf("%s %+v %v", rep.Spec.Name, rep.Traffic, rep.Results))
	return nil
}

// resumeRun builds the case's clients, loads states into them when not
// nil, runs phases on a fresh sequential driver and returns the events
// and every client's state after the run.
func resumeRun(t *testing.T, c resumeCase, phases optim.Phases, states [][]byte) ([]string, [][]byte) {
	t.Helper()
	s := c.setup(t)
	factory, _, err := c.alg.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	clients := make([]optim.Client, s.Net.N)
	d, err := optim.NewSequential(s.Net, func(i int) (optim.Client, error) {
		cl, err := factory(i)
		clients[i] = cl
		return cl, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range states {
		if err := statefulOf(t, clients[i]).LoadState(b); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	log := &logSink{}
	if _, err := d.Execute(context.Background(), &phases, log); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(clients))
	for i, cl := range clients {
		if out[i], err = statefulOf(t, cl).SaveState(); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	return log.events, out
}

func TestResumeIsBitIdentical(t *testing.T) {
	for name, c := range resumeCases() {
		t.Run(name, func(t *testing.T) {
			main := mainPhase(t, c)
			for cut := 1; cut < main.Rounds; cut++ {
				a, b := cutAt(main, cut)
				ref, refStates := resumeRun(t, c, optim.Phases{a, b}, nil)
				first, states := resumeRun(t, c, optim.Phases{a}, nil)
				b.Tick = int64(cut)
				second, gotStates := resumeRun(t, c, optim.Phases{b}, states)
				if got := append(first, second...); strings.Join(got, "\n") != strings.Join(ref, "\n") {
					t.Fatalf("cut after round %d: the events differ", cut)
				}
				for i := range refStates {
					if !bytes.Equal(gotStates[i], refStates[i]) {
						t.Fatalf("cut after round %d: client %d's final state differs", cut, i)
					}
				}
			}
		})
	}
}

// LoadState refuses, with an error and without changing the part, a
// state that does not fit.
func TestLoadStateRejectsMisfits(t *testing.T) {
	reject := func(t *testing.T, what string, to optim.Stateful, b []byte, want string) {
		t.Helper()
		before, err := to.SaveState()
		if err != nil {
			t.Fatal(err)
		}
		if err := to.LoadState(b); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", what, err, want)
		}
		if after, _ := to.SaveState(); !bytes.Equal(before, after) {
			t.Errorf("%s: the refused state changed the part", what)
		}
	}
	fresh := func(c resumeCase, s *optim.Setup) []optim.Stateful {
		factory, _, err := c.alg.Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		var out []optim.Stateful
		for i := range 3 {
			cl, err := factory(i)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, statefulOf(t, cl))
		}
		return out
	}
	cases := resumeCases()
	saved := map[string][][]byte{}
	for name, c := range cases {
		main := mainPhase(t, c)
		a, _ := cutAt(main, 3) // between a down and an up round
		_, saved[name] = resumeRun(t, c, optim.Phases{a}, nil)
		states, parts := saved[name], fresh(c, c.setup(t))
		for i, p := range parts {
			if err := p.LoadState(states[i]); err != nil {
				t.Fatalf("%s client %d's own state: %v", name, i, err)
			}
			if b, err := p.SaveState(); err != nil || !bytes.Equal(b, states[i]) {
				t.Fatalf("%s client %d saves another state than it loaded (%v)", name, i, err)
			}
		}
		parts = fresh(c, c.setup(t))
		srv, c1, c2 := parts[0], parts[1], parts[2]
		reject(t, name+": truncated server", srv, states[0][:len(states[0])/2], "decoding")
		reject(t, name+": truncated client", c1, states[1][:len(states[1])/2], "decoding")
		reject(t, name+": garbage", srv, []byte("not a state"), "decoding")
		reject(t, name+": server into a client", c1, states[0], "")
		reject(t, name+": client into the server", srv, states[1], "")
		reject(t, name+": client 1 into client 2", c2, states[1], "client 1")
		// Another model: another d.
		s := c.setup(t)
		s.Model = models.Plain(models.NewSoftmax(4, 2, 1e-3))
		s.X0 = make([]float64, s.Model.DimX())
		other := fresh(c, s)
		reject(t, name+": server into another model", other[0], states[0], "length")
		reject(t, name+": client into another model", other[1], states[1], "length")
	}
	fa := fresh(cases["fedavg"], cases["fedavg"].setup(t))

	// Corrupt parts of FedAvg's states.
	var ms meanState
	if err := optim.DecodeState(saved["fedavg"][0], &ms); err != nil {
		t.Fatal(err)
	}
	enc := func(v any) []byte {
		b, err := optim.EncodeState(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bs := ms
	bs.Sampled.Sampler.Chosen = []int{5}
	reject(t, "fedavg server: client 5 sampled", fa[0], enc(bs), "client 5")
	bs = ms
	bs.Sampled.Sampler.RNG = nil
	reject(t, "fedavg server: corrupt stream", fa[0], enc(bs), "stream")
	var cs clientState
	if err := optim.DecodeState(saved["fedavg"][1], &cs); err != nil {
		t.Fatal(err)
	}
	var ss sgdState
	if err := optim.DecodeState(cs.Trainer, &ss); err != nil {
		t.Fatal(err)
	}
	client := func(s sgdState) []byte { return enc(clientState{Picked: cs.Picked, Trainer: enc(s)}) }
	bc := ss
	bc.Batch.Perm = append([]int{len(ss.Batch.Perm)}, ss.Batch.Perm...)
	reject(t, "fedavg client: minibatch order over more data", fa[1], client(bc), "")
	bc = ss
	bc.Batch.Perm = append([]int(nil), ss.Batch.Perm...)
	bc.Batch.Perm[0] = -1
	reject(t, "fedavg client: minibatch order", fa[1], client(bc), "permutation")
	bc = ss
	bc.Batch.RNG = bc.Batch.RNG[:5]
	reject(t, "fedavg client: minibatch stream", fa[1], client(bc), "stream")
}
