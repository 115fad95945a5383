package optim

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"hgpsim/graph"
	"hgpsim/models"
)

// FedAvg runs its training as one long phase and is checkpointed between
// rounds of that phase (as the Comm-FedBiO family, tested in optim/fedbio). These tests cut the phase into two parts, save every client after
// the first, load the states into freshly built clients and run the second
// part on a fresh driver: the events, results and final states must be
// those of one driver running both parts.

// fedCase is an algorithm of the family with the setup it runs on.
type fedCase struct {
	alg   Algorithm
	setup func(t *testing.T) *Setup
}

func fedCases() map[string]fedCase {
	star := &graph.Star{Prob: 1, ToHub: 0.7, FromHub: 0.85}
	return map[string]fedCase{
		"fedavg": {&FedAvg{Rounds: 6, Participation: 0.5, LocalSteps: 2, LR: 0.1, Batch: 8, EvalEvery: 2},
			func(t *testing.T) *Setup { return fedAvgSetup(t, 4, star) }},
	}
}

// fedRun builds the case's clients, loads
// states into them when not nil, runs phases on a fresh sequential driver
// and returns the events and every client's state after the run.
func fedRun(t *testing.T, c fedCase, phases Phases, states [][]byte) (*eventLog, [][]byte) {
	t.Helper()
	s := c.setup(t)
	factory, _, err := c.alg.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	clients := make([]Client, s.Net.N)
	d, err := NewSequential(s.Net, func(i int) (Client, error) {
		cl, err := factory(i)
		if err != nil {
			return nil, err
		}
		clients[i] = cl
		return cl, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range states {
		st, ok := statefulOf(clients[i])
		if !ok {
			t.Fatalf("client %d (%T) is not Stateful", i, clients[i])
		}
		if err := st.LoadState(b); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	log := &eventLog{}
	if _, err := d.Execute(context.Background(), &phases, eventSink{t, log}); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(clients))
	for i, cl := range clients {
		st, ok := statefulOf(cl)
		if !ok {
			t.Fatalf("client %d (%T) is not Stateful", i, cl)
		}
		if out[i], err = st.SaveState(); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	return log, out
}

// fedPhases returns the case's program as one training phase, after the
// phases before it (preprocess), and its period (the runtime rounds of one
// outer iteration). It is built here, not taken from Plan, whose program
// may cut the training phase into parts.
func fedPhases(t *testing.T, c fedCase) (pre []PhaseSpec, main PhaseSpec, period int) {
	t.Helper()
	switch a := c.alg.(type) {
	case *FedAvg:
		eval := 0
		if a.EvalEvery > 0 {
			eval = 2 * a.EvalEvery
		}
		return nil, PhaseSpec{Name: "fedavg", Rounds: 2 * a.Rounds, EvalEvery: eval, Tick: Continue}, 2
	default:
		t.Fatalf("%T: not an algorithm of the family", c.alg)
	}
	return nil, PhaseSpec{}, 0
}

// cutAt returns the training phase cut after round c into two parts
// (optim.SplitPhase's kind, at any round).
func cutAt(main PhaseSpec, c int) (a, b PhaseSpec) {
	a, b = main, main
	a.Rounds, a.Continued, a.Total = c, true, main.Rounds
	b.Offset, b.Rounds, b.Total = c, main.Rounds-c, main.Rounds
	return a, b
}

// A run cut at any round of its training phase and continued on freshly
// built clients from their saved states reports, bit for bit, what one
// driver running both parts reports, and ends in the same states. Cuts at
// outer-iteration boundaries that are evaluated rounds are also checked
// against the uncut run's evaluations.
func TestFedResumeIsBitIdentical(t *testing.T) {
	for name, c := range fedCases() {
		t.Run(name, func(t *testing.T) {
			pre, main, period := fedPhases(t, c)
			preRounds := 0
			for _, p := range pre {
				preRounds += p.Rounds
			}
			uncut, _ := fedRun(t, c, append(append(Phases(nil), pre...), main), nil)
			uncutEvals := evaluations(t, uncut)
			for cut := 1; cut < main.Rounds; cut++ {
				a, b := cutAt(main, cut)
				ref, refStates := fedRun(t, c, append(append(Phases(nil), pre...), a, b), nil)
				first, states := fedRun(t, c, append(append(Phases(nil), pre...), a), nil)
				b.Tick = int64(preRounds + cut)
				second, gotStates := fedRun(t, c, Phases{b}, states)
				got := append(append([][]byte(nil), first.events...), second.events...)
				if len(got) != len(ref.events) {
					t.Fatalf("cut after round %d: %d events, want %d", cut, len(got), len(ref.events))
				}
				for e := range got {
					if !bytes.Equal(got[e], ref.events[e]) {
						t.Fatalf("cut after round %d: event %d of %d differs", cut, e, len(got))
					}
				}
				for i := range refStates {
					if !bytes.Equal(gotStates[i], refStates[i]) {
						t.Fatalf("cut after round %d: client %d's final state differs", cut, i)
					}
				}
				if cut%period == 0 && main.ShouldEval(cut-1) {
					if ev := evaluations(t, ref); !equalEncoded(ev, uncutEvals) {
						t.Fatalf("cut after round %d: the evaluations differ from the uncut run's", cut)
					}
				}
			}
		})
	}
}

// evaluations returns the clients' stats of every evaluated round, in
// order, re-encoded without the phase's round numbering.
func evaluations(t *testing.T, l *eventLog) [][]byte {
	t.Helper()
	var out [][]byte
	for _, e := range l.events {
		var ev struct {
			Phase          string
			Step, Round, N int
			Traffic        Traffic
			Clients        []Stats
		}
		if err := DecodeState(e, &ev); err != nil || ev.Clients == nil {
			continue // a phase report
		}
		b, err := EncodeState(ev.Clients)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func equalEncoded(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// fedStates runs the case up to round cut of its training phase and
// returns the clients' states and a fresh server and client 1 and 2.
func fedStates(t *testing.T, c fedCase, cut int) ([][]byte, []Stateful) {
	t.Helper()
	pre, main, _ := fedPhases(t, c)
	a, _ := cutAt(main, cut)
	_, states := fedRun(t, c, append(append(Phases(nil), pre...), a), nil)
	return states, freshParts(t, c.alg, c.setup(t))
}

func freshParts(t *testing.T, alg Algorithm, s *Setup) []Stateful {
	t.Helper()
	factory, _, err := alg.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	var out []Stateful
	for i := range 3 {
		cl, err := factory(i)
		if err != nil {
			t.Fatal(err)
		}
		st, ok := statefulOf(cl)
		if !ok {
			t.Fatalf("client %d (%T) is not Stateful", i, cl)
		}
		out = append(out, st)
	}
	return out
}

// LoadState refuses, with an error and without changing the part, a
// state that does not fit.
func TestFedLoadStateRejectsMismatches(t *testing.T) {
	cases := fedCases()
	reject := func(t *testing.T, what string, to Stateful, b []byte, want string) {
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
	for _, name := range []string{"fedavg"} {
		t.Run(name, func(t *testing.T) {
			c := cases[name]
			_, main, period := fedPhases(t, c)
			cut := period + 3 // inside the second outer iteration's call
			if cut >= main.Rounds {
				cut = main.Rounds - 1
			}
			states, parts := fedStates(t, c, cut)
			// The right states load, and save as they were saved.
			for i, p := range parts {
				if err := p.LoadState(states[i]); err != nil {
					t.Fatalf("client %d's own state: %v", i, err)
				}
				if b, err := p.SaveState(); err != nil || !bytes.Equal(b, states[i]) {
					t.Fatalf("client %d saves another state than it loaded (%v)", i, err)
				}
			}
			parts = freshParts(t, c.alg, c.setup(t))
			srv, c1, c2 := parts[0], parts[1], parts[2]
			reject(t, "truncated server", srv, states[0][:len(states[0])/2], "decoding")
			reject(t, "truncated client", c1, states[1][:len(states[1])/2], "decoding")
			reject(t, "garbage", srv, []byte("not a state"), "decoding")
			reject(t, "empty", c1, nil, "decoding")
			reject(t, "server into a client", c1, states[0], "")
			reject(t, "client into the server", srv, states[1], "")
			reject(t, "client 1 into client 2", c2, states[1], "client 1")
		})
	}

	stateOf := func(name string) [][]byte {
		c := cases[name]
		_, main, _ := fedPhases(t, c)
		st, _ := fedStates(t, c, main.Rounds/2)
		return st
	}
	fedavg := stateOf("fedavg")
	fedavgParts := freshParts(t, cases["fedavg"].alg, cases["fedavg"].setup(t))

	// Another model (an MLP: another d).
	other := func(name string, mod func(s *Setup)) []Stateful {
		c := cases[name]
		s := c.setup(t)
		mod(s)
		return freshParts(t, c.alg, s)
	}
	fa := other("fedavg", func(s *Setup) {
		s.Model = models.Plain(models.NewMLP(4, 2, 3, 1e-3))
		s.X0 = make([]float64, s.Model.DimX())
	})
	reject(t, "fedavg server into another model", fa[0], fedavg[0], "length")
	reject(t, "fedavg client into another model", fa[1], fedavg[1], "length")
	var fs fedAvgServerState
	if err := DecodeState(fedavg[0], &fs); err != nil {
		t.Fatal(err)
	}
	var fc fedAvgClientState
	if err := DecodeState(fedavg[1], &fc); err != nil {
		t.Fatal(err)
	}
	enc := func(v any) []byte {
		b, err := EncodeState(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bs := fs
	bs.Chosen = []int{5}
	reject(t, "fedavg server: client 5 sampled", fedavgParts[0], enc(bs), "client 5")
	bs = fs
	bs.RNG = nil
	reject(t, "fedavg server: corrupt stream", fedavgParts[0], enc(bs), "stream")
	bc := fc
	bc.Batch.Perm = append([]int{len(fc.Batch.Perm)}, fc.Batch.Perm...)
	reject(t, "fedavg client: minibatch order over more data", fedavgParts[1], enc(bc), "")
	bc = fc
	bc.Batch.Perm = append([]int(nil), fc.Batch.Perm...)
	bc.Batch.Perm[0] = -1
	reject(t, "fedavg client: minibatch order", fedavgParts[1], enc(bc), "permutation")
	bc = fc
	bc.Batch.RNG = bc.Batch.RNG[:5]
	reject(t, "fedavg client: minibatch stream", fedavgParts[1], enc(bc), "stream")
}
