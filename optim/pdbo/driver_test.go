package pdbo

import (
	"context"
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/optim"
)

// The family's tests build networks and drive behaviours through optim's
// public surface only.

// netSpec is a network kind with its parameters; net picks a kind with its
// defaults.
type netSpec = registry.Choice[graph.Topology]

func net(kind string) netSpec { return registry.Choose[graph.Topology](kind) }

// must takes what a constructor returns and gives it back to a test,
// failing the test on an error: must(f())(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func buildNet(t testing.TB, spec netSpec, n int, seed uint64) *graph.Network {
	t.Helper()
	return must(graph.Build(spec, n, seed))(t)
}

// testDriver runs behaviours phase by phase on one sequential driver, so
// that ticks continue from one phase to the next.
type testDriver struct {
	d  *optim.Sequential
	cs []*optim.Fixed
}

func newTestDriver(t testing.TB, nw *graph.Network) *testDriver {
	t.Helper()
	factory, cs := optim.FixedClients(make([]optim.Behaviour, nw.N))
	return &testDriver{d: must(optim.NewSequential(nw, factory))(t), cs: cs}
}

// run runs one phase of rounds rounds with behaviours bs.
func (td *testDriver) run(name string, rounds int, bs []optim.Behaviour) error {
	for i, b := range bs {
		td.cs[i].Behaviour = b
	}
	_, err := td.d.Execute(context.Background(), &optim.Phases{{Name: name, Rounds: rounds, Tick: optim.Continue}}, optim.NoSink{})
	return err
}

// runOnce runs behaviours bs for rounds rounds on a fresh driver.
func runOnce(t testing.TB, nw *graph.Network, name string, rounds int, bs []optim.Behaviour) error {
	t.Helper()
	return newTestDriver(t, nw).run(name, rounds, bs)
}
