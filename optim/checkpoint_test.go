package optim

import (
	"context"
	"strings"
	"testing"
)

// counter is a behaviour that counts its rounds; savable makes it
// Stateful.
type counter struct{ rounds int }

func (c *counter) Send(*Round, Outbox) error       { return nil }
func (c *counter) Receive(*Round, []Message) error { c.rounds++; return nil }

type savable struct{ counter }

func (s *savable) SaveState() ([]byte, error) { return EncodeState(s.rounds) }
func (s *savable) LoadState(b []byte) error   { return DecodeState(b, &s.rounds) }

// steps is a program of one phase per outer step.
func steps(k int) *Phases {
	ps := make(Phases, k)
	for s := range ps {
		ps[s] = PhaseSpec{Name: "p", Rounds: 3, Step: s, Tick: Continue}
	}
	return &ps
}

// Checkpoints saves at every Every-th boundary with the tick the next
// phase starts at, and a client that cannot save its state turns
// checkpoints off instead of failing the run.
func TestCheckpointsBoundariesAndStateless(t *testing.T) {
	nw := buildNet(t, net("stochastic-directed"), 3, 1)
	run := func(bs []Behaviour, every int) (*Checkpoints, []*Checkpoint) {
		factory, _ := FixedClients(bs)
		wrapped := func(i int) (Client, error) {
			c, err := factory(i)
			return Resumable(c, c, i), err
		}
		drv, err := NewSequential(nw, wrapped)
		if err != nil {
			t.Fatal(err)
		}
		var saved []*Checkpoint
		cps := &Checkpoints{Program: steps(5), Every: every, Save: func(cp *Checkpoint) error {
			saved = append(saved, cp)
			return nil
		}}
		if _, err := drv.Execute(context.Background(), cps, cps.Sink(NoSink{})); err != nil {
			t.Fatal(err)
		}
		return cps, saved
	}
	cps, saved := run([]Behaviour{&savable{}, &savable{}, &savable{}}, 2)
	if cps.Skipped != "" || len(saved) != 2 {
		t.Fatalf("every 2 of 4 boundaries: %d checkpoints, skipped %q", len(saved), cps.Skipped)
	}
	for k, cp := range saved {
		step := 2 * (k + 1)
		if cp.Next.Step != step || cp.Next.Tick != int64(3*step) || cp.Boundaries != step {
			t.Errorf("checkpoint %d: next step %d at tick %d after %d boundaries, want %d, %d, %d", k, cp.Next.Step, cp.Next.Tick, cp.Boundaries, step, 3*step, step)
		}
		var rounds int
		if err := DecodeState(cp.Clients[1], &rounds); err != nil || rounds != 3*step {
			t.Errorf("checkpoint %d: client 1 saved %d rounds (%v), want %d", k, rounds, err, 3*step)
		}
	}
	cps, saved = run([]Behaviour{&savable{}, &counter{}, &savable{}}, 1)
	if len(saved) != 0 || !strings.Contains(cps.Skipped, "client 1") {
		t.Errorf("a stateless client: %d checkpoints, skipped %q", len(saved), cps.Skipped)
	}
}
