package optim

import (
	"context"
	"testing"

	"hgpsim/graph"
)

// testDriver runs behaviours phase by phase on one sequential driver, so
// that ticks continue from one phase to the next.
type testDriver struct {
	d  *Sequential
	cs []*Fixed
}

func newTestDriver(t testing.TB, nw *graph.Network) *testDriver {
	t.Helper()
	factory, cs := FixedClients(make([]Behaviour, nw.N))
	d, err := NewSequential(nw, factory)
	if err != nil {
		t.Fatal(err)
	}
	return &testDriver{d: d, cs: cs}
}

// run runs one phase of rounds rounds with behaviours bs.
func (td *testDriver) run(name string, rounds int, bs []Behaviour) error {
	for i, b := range bs {
		td.cs[i].Behaviour = b
	}
	p := Phases{{Name: name, Rounds: rounds, Tick: Continue}}
	_, err := td.d.Execute(context.Background(), &p, NoSink{})
	return err
}

// runOnce runs behaviours bs for rounds rounds on a fresh driver.
func runOnce(t testing.TB, nw *graph.Network, name string, rounds int, bs []Behaviour) error {
	t.Helper()
	return newTestDriver(t, nw).run(name, rounds, bs)
}
