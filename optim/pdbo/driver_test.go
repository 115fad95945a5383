package pdbo

import (
	"context"
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/optim"
)

// netSpec is a network kind with its parameters.
type netSpec = registry.Choice[graph.Topology]

// net returns a network kind with its default parameters.
func net(kind string) netSpec { return registry.Choose[graph.Topology](kind) }

func buildNet(t testing.TB, spec netSpec, n int, seed uint64) *graph.Network {
	t.Helper()
	nw, err := graph.Build(spec, n, seed)
	if err != nil {
		t.Fatalf("graph.Build(%s): %v", spec.Name, err)
	}
	return nw
}

// testDriver runs behaviours phase by phase on one sequential driver
// through the public surface, so that ticks continue from one phase to
// the next.
type testDriver struct {
	d  *optim.Sequential
	cs []*optim.Fixed
}

func newTestDriver(t testing.TB, nw *graph.Network) *testDriver {
	t.Helper()
	factory, cs := optim.FixedClients(make([]optim.Behaviour, nw.N))
	d, err := optim.NewSequential(nw, factory)
	if err != nil {
		t.Fatal(err)
	}
	return &testDriver{d: d, cs: cs}
}

// run runs one phase of rounds rounds with behaviours bs.
func (td *testDriver) run(name string, rounds int, bs []optim.Behaviour) error {
	for i, b := range bs {
		td.cs[i].Behaviour = b
	}
	p := optim.Phases{{Name: name, Rounds: rounds, Tick: optim.Continue}}
	_, err := td.d.Execute(context.Background(), &p, optim.NoSink{})
	return err
}

// runOnce runs behaviours bs for rounds rounds on a fresh driver.
func runOnce(t testing.TB, nw *graph.Network, name string, rounds int, bs []optim.Behaviour) error {
	t.Helper()
	return newTestDriver(t, nw).run(name, rounds, bs)
}
