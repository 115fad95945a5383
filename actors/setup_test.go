package actors

import (
	"testing"

	"hgpsim/graph"
	"hgpsim/wire"
)

// A worker refuses a Setup whose block of clients is not its share of
// the split, in order: a gap would leave an answer missing forever, a
// stray id would index past the block.
func TestWorkerRefusesABlockThatIsNotItsShare(t *testing.T) {
	nw := &graph.Network{N: 6}
	for name, m := range map[string]*wire.Setup{
		"no clients":     {Peers: []string{"a", "b"}, Firsts: []int64{0, 3}},
		"a gap":          {Peers: []string{"a", "b"}, Firsts: []int64{0, 3}, Clients: []int64{0, 2}},
		"out of order":   {Peers: []string{"a", "b"}, Firsts: []int64{0, 3}, Clients: []int64{0, 5, 2}},
		"swapped":        {Peers: []string{"a", "b"}, Firsts: []int64{0, 3}, Clients: []int64{0, 2, 1, 2}},
		"first block 1":  {Peers: []string{"a", "b"}, Firsts: []int64{1, 3}, Clients: []int64{1, 2}},
		"another block":  {Peers: []string{"a", "b"}, Firsts: []int64{0, 3}, Clients: []int64{3, 4, 5}},
		"not a peer":     {Peers: []string{"b", "c"}, Firsts: []int64{0, 3}, Clients: []int64{0, 1, 2}},
		"blocks overlap": {Peers: []string{"a", "b"}, Firsts: []int64{0, 0}, Clients: []int64{0, 1, 2}},
	} {
		h := &workerHost{name: "a"}
		if _, err := h.newBlock(m, nw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
