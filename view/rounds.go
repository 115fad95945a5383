package view

import (
	"errors"

	"hgpsim/graph"
)

// maxWindow bounds the rounds a request returns: a long trace is sent in
// windows, never whole.
const maxWindow = 512

// blockRounds is the rounds the server computes and keeps together, and
// the page asks for at once: a block of a 100-client dense network with
// Gilbert–Elliott links takes about 0.1 s to realize.
const blockRounds = 64

// maxBlocks bounds the blocks kept, about 40 MB for 10⁴ links.
const maxBlocks = 512

// block is a computed block of rounds, with the clock of its last use.
type block struct {
	states []RoundState
	used   uint64
	ready  chan struct{} // closed once states is set
	err    error
}

// rounds returns the states of rounds [from, from+count). A request for a
// few rounds is computed as asked; a longer one is made of aligned
// blocks, computed in parallel and kept, so that scrubbing back and
// playing again costs nothing.
func (rv *runView) rounds(from uint64, count int) ([]RoundState, error) {
	if rv.nw == nil {
		return nil, errNoNetwork
	}
	if count < blockRounds/2 {
		return rv.compute(from, count)
	}
	first := from / blockRounds * blockRounds
	var bs []*block
	for b := first; b < from+uint64(count); b += blockRounds {
		bs = append(bs, rv.block(b))
	}
	out := make([]RoundState, 0, count)
	for k, b := range bs {
		<-b.ready
		if b.err != nil {
			return nil, b.err
		}
		start := first + uint64(k)*blockRounds
		lo := max(from, start) - start
		hi := min(from+uint64(count), start+blockRounds) - start
		out = append(out, b.states[lo:hi]...)
	}
	return out, nil
}

// block returns the block starting at round first, computing it in the
// background when it is not kept.
func (rv *runView) block(first uint64) *block {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.clock++
	if b := rv.blocks[first]; b != nil {
		b.used = rv.clock
		return b
	}
	if len(rv.blocks) >= maxBlocks {
		var oldest uint64
		var used uint64 = 1<<64 - 1
		for k, b := range rv.blocks {
			select {
			case <-b.ready:
				if b.used < used {
					oldest, used = k, b.used
				}
			default: // still being computed
			}
		}
		delete(rv.blocks, oldest)
	}
	b := &block{used: rv.clock, ready: make(chan struct{})}
	rv.blocks[first] = b
	go func() {
		rv.slots <- struct{}{}
		defer func() { <-rv.slots }()
		b.states, b.err = rv.compute(first, blockRounds)
		close(b.ready)
	}()
	return b
}

// RoundState is one round's link states, indexing Info.Links: Up and Cut
// are bit sets (bit k of byte k/8), base64 in JSON; Cut marks the links a
// partition cuts; Off lists the offline clients; Delay lists [link, rounds]
// for the up links whose messages arrive late.
type RoundState struct {
	Up    []byte   `json:"up"`
	Cut   []byte   `json:"cut,omitempty"`
	Off   []int    `json:"off,omitempty"`
	Delay [][2]int `json:"delay,omitempty"`
}

// errNoNetwork is returned for rounds of a run whose network could not be
// rebuilt.
var errNoNetwork = errors.New("the run's network could not be rebuilt")

// compute realizes the states of rounds [from, from+count).
func (rv *runView) compute(from uint64, count int) ([]RoundState, error) {
	if rv.nw == nil {
		return nil, errNoNetwork
	}
	nw := rv.nw
	m := len(rv.info.Links)
	delays := nw.Delays()
	var partitions []graph.Failure
	for _, f := range nw.Failures {
		if _, ok := f.(*graph.Partition); ok {
			partitions = append(partitions, f)
		}
	}
	out := make([]RoundState, count)
	var recv []int
	for r := range out {
		tick := from + uint64(r)
		st := RoundState{Up: make([]byte, (m+7)/8)}
		for i := range nw.N {
			if nw.Offline(i, tick) {
				st.Off = append(st.Off, i)
			}
			recv = nw.Realize(i, tick, recv)
			row, js := rv.rowOf[i], rv.recvOf[i]
			q := 0
			for _, j := range recv {
				if j == i {
					continue
				}
				for q < len(js) && js[q] < j {
					q++
				}
				if q == len(js) || js[q] != j {
					continue // not an expected link (never happens for a Build network)
				}
				k := row[q]
				st.Up[k>>3] |= 1 << (k & 7)
				if delays {
					if d := nw.Delay(i, j, tick); d > 0 {
						st.Delay = append(st.Delay, [2]int{k, d})
					}
				}
			}
		}
		if len(partitions) > 0 {
			cut := make([]byte, (m+7)/8)
			any := false
			for k, l := range rv.info.Links {
				for _, p := range partitions {
					if p.Cut(nw.Seed, l[0], l[1], tick) {
						cut[k>>3] |= 1 << (k & 7)
						any = true
						break
					}
				}
			}
			if any {
				st.Cut = cut
			}
		}
		out[r] = st
	}
	return out, nil
}
