package graph

import (
	"fmt"
	"slices"
	"sort"
)

// MaxSparseNodes bounds the number of nodes of a sparse topology (see
// Sparse): its expected graph is stored as adjacency lists, O(n + links).
const MaxSparseNodes = 1_000_000

// Sparse is implemented by topologies whose expected graph has few links
// per node: Build stores it as adjacency lists only (Network.Prob stays
// nil), so they run up to MaxSparseNodes nodes.
type Sparse interface {
	Sparse() bool
}

// MaxNodesOf returns the largest n a topology builds: MaxSparseNodes for
// a sparse one, MaxNodes otherwise.
func MaxNodesOf(t Topology) int {
	if s, ok := t.(Sparse); ok && s.Sparse() {
		return MaxSparseNodes
	}
	return MaxNodes
}

// IsSparse reports whether nw stores its expected graph as adjacency
// lists only (Prob is nil).
func (nw *Network) IsSparse() bool { return nw.Prob == nil && nw.out != nil }

// newSparseNetwork returns an n-node network with only self-loops, stored
// as adjacency lists, for the builders of sparse topologies (setLink adds
// links, index sorts them).
func newSparseNetwork(n int, process LinkProcess) *Network {
	nw := &Network{N: n, Process: process, out: make([][]int, n), outProb: make([][]float64, n)}
	for i := range n {
		nw.out[i], nw.outProb[i] = []int{i}, []float64{1}
	}
	return nw
}

// setLink sets δ̄_{i→j} = p in either storage; on adjacency lists a later
// call for the same link wins, as an assignment to Prob[i][j] would.
func (nw *Network) setLink(i, j int, p float64) {
	if nw.Prob != nil {
		nw.Prob[i][j] = p
		return
	}
	nw.out[i] = append(nw.out[i], j)
	nw.outProb[i] = append(nw.outProb[i], p)
}

// sortLinks puts every adjacency list in ascending order of receiver,
// keeping the last setLink of a repeated link and dropping links with
// δ̄ = 0 (no link), as Network.index does for Prob.
func (nw *Network) sortLinks() {
	for i := range nw.out {
		row, ps := nw.out[i], nw.outProb[i]
		idx := make([]int, len(row))
		for k := range idx {
			idx[k] = k
		}
		sort.SliceStable(idx, func(a, b int) bool { return row[idx[a]] < row[idx[b]] })
		js, qs := make([]int, 0, len(row)), make([]float64, 0, len(row))
		for k, x := range idx {
			if k+1 < len(idx) && row[idx[k+1]] == row[x] {
				continue // a later setLink of the same link wins
			}
			if ps[x] > 0 || row[x] == i {
				js, qs = append(js, row[x]), append(qs, ps[x])
			}
		}
		nw.out[i], nw.outProb[i] = slices.Clip(js), slices.Clip(qs)
	}
}

// Delta returns δ̄_{i→j}, 0 when there is no link, in either storage.
func (nw *Network) Delta(i, j int) float64 {
	if nw.Prob != nil {
		return nw.Prob[i][j]
	}
	row := nw.out[i]
	if k, ok := slices.BinarySearch(row, j); ok {
		return nw.outProb[i][k]
	}
	return 0
}

// Out returns the receivers j of sender i with δ̄_{i→j} > 0, ascending and
// self included, and their δ̄: read-only views, valid for a Network made
// by Build.
func (nw *Network) Out(i int) ([]int, []float64) { return nw.out[i], nw.outProb[i] }

// outRow is Out for any Network, also one not made by Build (whose lists
// are made from Prob on the fly).
func (nw *Network) outRow(i int) ([]int, []float64) {
	if nw.out != nil {
		return nw.out[i], nw.outProb[i]
	}
	var js []int
	var ps []float64
	for j, p := range nw.Prob[i] {
		if p > 0 || j == i {
			js, ps = append(js, j), append(ps, p)
		}
	}
	return js, ps
}

// Links returns the number of directed links between distinct nodes.
func (nw *Network) Links() int64 {
	var m int64
	for _, row := range nw.out {
		m += int64(len(row) - 1)
	}
	return m
}

// validateSparse is Validate for adjacency lists: the same checks in the
// same order, each costing O(n + links).
func (nw *Network) validateSparse() error {
	n := nw.N
	if len(nw.out) != n {
		return fmt.Errorf("graph: %d adjacency lists, want n=%d", len(nw.out), n)
	}
	for i, row := range nw.out {
		for k, j := range row {
			if p := nw.outProb[i][k]; !(p >= 0 && p <= 1) {
				return fmt.Errorf("graph: δ̄ of edge %d→%d is %g, must be in [0, 1]", i, j, p)
			}
		}
		if d := nw.Delta(i, i); d != 1 {
			return fmt.Errorf("graph: δ̄ of self-loop %d→%d is %g, must be 1 (a client always reaches itself)", i, i, d)
		}
	}
	if nw.Symmetric {
		for i, row := range nw.out {
			for k, j := range row {
				if p, q := nw.outProb[i][k], nw.Delta(j, i); j > i && p != q {
					return fmt.Errorf("graph: symmetric network has δ̄=%g on edge %d→%d but δ̄=%g on %d→%d", p, i, j, q, j, i)
				}
			}
		}
		// A link j→i with j > i and no i→j.
		for i, row := range nw.out {
			for k, j := range row {
				if p := nw.outProb[i][k]; j < i && nw.Delta(j, i) != p {
					return fmt.Errorf("graph: symmetric network has δ̄=%g on edge %d→%d but δ̄=%g on %d→%d", nw.Delta(j, i), j, i, p, i, j)
				}
			}
		}
	}
	if err := nw.checkStronglyConnected(); err != nil {
		return err
	}
	for i, row := range nw.out {
		for k, j := range row {
			if p := nw.outProb[i][k]; p > 0 && nw.Delta(j, i) == 0 {
				return fmt.Errorf("graph: assumption 6 violated: edge %d→%d has δ̄=%g but %d→%d has δ̄=0", i, j, p, j, i)
			}
		}
	}
	if nw.Mixing != nil {
		return fmt.Errorf("graph: fixed mixing weights need the dense storage")
	}
	return nil
}

// sparseNeighbours lists, for unreached, the links with δ̄ > 0 out of a
// node (into it when reverse, from lists of in-neighbours built for it).
func (nw *Network) sparseNeighbours(reverse bool) func(v int, visit func(u int)) {
	if !reverse {
		return func(v int, visit func(u int)) {
			for k, u := range nw.out[v] {
				if nw.outProb[v][k] > 0 {
					visit(u)
				}
			}
		}
	}
	deg := make([]int, nw.N)
	for _, row := range nw.out {
		for _, j := range row {
			deg[j]++
		}
	}
	in := make([][]int, nw.N)
	for j := range in {
		in[j] = make([]int, 0, deg[j])
	}
	for i, row := range nw.out {
		for k, j := range row {
			if nw.outProb[i][k] > 0 {
				in[j] = append(in[j], i)
			}
		}
	}
	return func(v int, visit func(u int)) {
		for _, u := range in[v] {
			visit(u)
		}
	}
}
