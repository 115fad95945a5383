package datasets

import "fmt"

// BlockSource is a Source that can build the data of a block of
// consecutive nodes without building the others': a worker process that
// hosts nodes lo … hi−1 of a large run holds their data only.
//
// What is global about a source (class means, a Dirichlet partition of a
// pooled data set, a permutation of the training split) is still computed
// whole, on indices and labels, which is cheap; only the block's rows are
// copied out. The files a source reads are read whole.
type BlockSource interface {
	Source
	// LoadBlock builds the data of nodes lo … hi−1 of a run of nodes
	// nodes: element k is node lo+k, with the same bits as element lo+k
	// of Load(nodes, seed). It fails when Load would, for any node of
	// the run, where that is known from indices alone.
	LoadBlock(nodes int, seed uint64, lo, hi int) ([]ClientData, error)
}

// LoadBlock returns the data of nodes lo … hi−1 of a run of nodes nodes,
// element k for node lo+k: from src's own LoadBlock when it is a
// BlockSource, else cut from a full Load (the other nodes' data is then
// garbage once this returns). A block outside [0, nodes] is a programmer
// error and panics.
func LoadBlock(src Source, nodes int, seed uint64, lo, hi int) ([]ClientData, error) {
	checkBlock(nodes, lo, hi)
	if b, ok := src.(BlockSource); ok {
		return b.LoadBlock(nodes, seed, lo, hi)
	}
	all, err := src.Load(nodes, seed)
	if err != nil {
		return nil, err
	}
	if len(all) != nodes {
		return nil, fmt.Errorf("datasets: the source built %d nodes' data for %d nodes", len(all), nodes)
	}
	return append([]ClientData(nil), all[lo:hi]...), nil
}

// checkBlock panics unless 0 <= lo <= hi <= nodes.
func checkBlock(nodes, lo, hi int) {
	if lo < 0 || hi < lo || hi > nodes {
		panic(fmt.Sprintf("datasets: block of nodes [%d, %d) outside [0, %d)", lo, hi, nodes))
	}
}

// inBlock reports whether node i is in [lo, hi).
func inBlock(i, lo, hi int) bool { return i >= lo && i < hi }

// BlockExampler is a Source whose data shrinks with the block of nodes a
// process builds; Examples bounds the whole run's.
type BlockExampler interface {
	// BlockExamples bounds the examples a process holds while it builds
	// the data of block of the nodes nodes (LoadBlock), files included.
	BlockExamples(nodes, block int) int64
}

// BlockExamples bounds the examples a process holds while it builds the
// data of block of the nodes nodes: src's BlockExamples, else
// Examples(nodes), since a source that reads files reads them whole.
func BlockExamples(src Source, nodes, block int) int64 {
	if b, ok := src.(BlockExampler); ok {
		return b.BlockExamples(nodes, block)
	}
	return src.Examples(nodes)
}
