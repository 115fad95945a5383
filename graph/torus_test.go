package graph

import (
	"testing"

	"hgpsim/internal/registry"
)

func TestTorus(t *testing.T) {
	for _, c := range []struct {
		n, rows, cols, degree int
	}{{12, 3, 4, 4}, {12, 0, 0, 4}, {7, 0, 0, 2}, {8, 2, 4, 3}, {4, 2, 2, 2}} {
		nw, err := Build(registry.Choice[Topology]{Name: "torus", Params: &Torus{Rows: c.rows, Cols: c.cols, Prob: 0.5}}, c.n, 1)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		for i := range c.n {
			deg := 0
			for j := range c.n {
				if j != i && nw.Delta(i, j) > 0 {
					deg++
					if nw.Delta(j, i) != nw.Delta(i, j) {
						t.Errorf("%+v: link %d→%d is not symmetric", c, i, j)
					}
				}
			}
			if deg != c.degree {
				t.Errorf("%+v: node %d has %d neighbours, want %d", c, i, deg, c.degree)
			}
		}
	}
	if _, err := Build(registry.Choice[Topology]{Name: "torus", Params: &Torus{Rows: 5, Prob: 1}}, 12, 1); err == nil {
		t.Error("a 5-row torus of 12 nodes was accepted")
	}
}
