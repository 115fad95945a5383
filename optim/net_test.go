package optim

import (
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/registry"
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
