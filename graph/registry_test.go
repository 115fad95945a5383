package graph

import (
	"fmt"
	"testing"

	"hgpsim/internal/registry"
)

// Every registered topology keeps the promises of the Topology interface
// for the node counts its defaults accept: LinkCount bounds the links
// built (within a factor 2 for random graphs), OneWay says whether the directions are realized apart, and a
// topology connected by construction builds a graph that meets
// Assumptions 2 and 6. The kinds come from the registry, so a new topology
// is checked without editing this test; kinds whose defaults are not valid
// alone (an edge list has no edges) are covered through their examples by
// the scenario tests.
func TestEveryTopologyKeepsItsPromises(t *testing.T) {
	for _, kind := range Topologies.Kinds() {
		for _, n := range []int{2, 8, 16} {
			t.Run(fmt.Sprintf("%s/n=%d", kind, n), func(t *testing.T) {
				topo := registry.Choose[Topology](kind)
				if err := topo.Params.Validate(n); err != nil {
					t.Skipf("defaults not valid for %d nodes: %v", n, err)
				}
				nw, err := Build(topo, n, 7)
				if err != nil {
					if c, ok := topo.Params.(ConnectedByConstruction); ok && c.ConnectedByConstruction() {
						t.Fatalf("connected by construction, yet: %v", err)
					}
					if !topo.Params.OneWay() {
						t.Fatal(err)
					}
					return // a one-way topology may break Assumption 6
				}
				links := int64(0)
				for i := range n {
					for j := range n {
						if i != j && nw.Delta(i, j) > 0 {
							links++
						}
					}
				}
				// Resource estimates use LinkCount: a bound, or for a random
				// graph (static-undirected) its expected size, so a draw may
				// exceed it, though not by far.
				if max := topo.Params.LinkCount(n); links > 2*max {
					t.Errorf("%d links built, LinkCount says %d", links, max)
				}
				if nw.Symmetric == topo.Params.OneWay() {
					t.Errorf("Symmetric = %v but OneWay = %v", nw.Symmetric, topo.Params.OneWay())
				}
			})
		}
	}
}
