package graph_test

import (
	"math/bits"
	"strings"
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/registry"
)

func hypercube(t *testing.T, h *graph.Hypercube, n int) (*graph.Network, error) {
	t.Helper()
	return graph.Build(registry.Choice[graph.Topology]{Name: "hypercube", Params: h}, n, 1)
}

// The hypercube's links join exactly the nodes one bit apart, in both
// directions with the same probability, so every node has log₂ n
// neighbours; and the hop distance between two nodes, found by a
// breadth-first search over the built links, is the number of bits in
// which they differ (the graph is connected, of diameter log₂ n).
func TestHypercube(t *testing.T) {
	for _, c := range []struct {
		n, dim int
	}{{2, 0}, {8, 0}, {8, 3}, {64, 0}} {
		nw, err := hypercube(t, &graph.Hypercube{Dim: c.dim, Prob: 0.5}, c.n)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !nw.Symmetric {
			t.Errorf("%+v: not symmetric", c)
		}
		d := bits.TrailingZeros(uint(c.n))
		for i := range c.n {
			deg := 0
			for j := range c.n {
				oneBit := bits.OnesCount(uint(i^j)) == 1
				p := nw.Delta(i, j)
				switch {
				case i == j && p != 1:
					t.Errorf("%+v: self-loop %d has δ̄ %g", c, i, p)
				case oneBit && p != 0.5:
					t.Errorf("%+v: %d→%d differ in one bit, δ̄ %g, want 0.5", c, i, j, p)
				case i != j && !oneBit && p != 0:
					t.Errorf("%+v: %d→%d differ in %d bits, yet linked", c, i, j, bits.OnesCount(uint(i^j)))
				}
				if i != j && p > 0 {
					deg++
				}
			}
			if deg != d {
				t.Errorf("%+v: node %d has %d neighbours, want %d", c, i, deg, d)
			}
		}
		for src := range c.n {
			dist := hops(nw, src)
			for j, h := range dist {
				if want := bits.OnesCount(uint(src ^ j)); h != want {
					t.Fatalf("%+v: %d hops from %d to %d, want %d", c, h, src, j, want)
				}
			}
		}
	}
}

// hops returns the hop distance from src to every node over the links of
// nw (−1: unreachable).
func hops(nw *graph.Network, src int) []int {
	dist := make([]int, nw.N)
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	queue := []int{src}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		js, _ := nw.Out(i)
		for _, j := range js {
			if dist[j] < 0 {
				dist[j] = dist[i] + 1
				queue = append(queue, j)
			}
		}
	}
	return dist
}

// Invalid parameters are errors that say what is wrong.
func TestHypercubeRefuses(t *testing.T) {
	for _, c := range []struct {
		h    graph.Hypercube
		n    int
		want string
	}{
		{graph.Hypercube{Prob: 1}, 12, "power of two nodes, got 12 (8 or 16 would do)"},
		{graph.Hypercube{Dim: 3, Prob: 1}, 16, "dim 3 means 8 nodes, got 16"},
		{graph.Hypercube{Dim: 20, Prob: 1}, 16, "dim must be in [0, 19], got 20"},
		{graph.Hypercube{Dim: -1, Prob: 1}, 16, "dim must be in [0, 19], got -1"},
		{graph.Hypercube{Prob: 0}, 8, "prob must be in (0, 1], got 0"},
		{graph.Hypercube{Prob: 1.5}, 8, "prob must be in (0, 1], got 1.5"},
	} {
		_, err := hypercube(t, &c.h, c.n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v on %d nodes: error %v, want %q", c.h, c.n, err, c.want)
		}
	}
}
