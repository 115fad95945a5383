package models

import (
	"sync"

	"hgpsim/models/nn"
)

// A Net's workspaces (the activations, tangents and patch matrices of a
// batch: about 77 MB for FedEM's CNN at batch 128) are only needed during
// a call, so the clones of one Net share a pool of them instead of each
// keeping its own: a run holds as many as calls run at once (the
// sequential driver's goroutines), not one per client. A call sequence
// takes a workspace at its first pass and returns it when its outermost
// exported method returns; nothing a workspace holds outlives the
// sequence (every sequence starts with Logits, which overwrites what the
// later passes read), so which one a call gets changes no bits.

// workPool holds the idle workspaces of the clones of one Net.
type workPool struct {
	mu    sync.Mutex
	proto *nn.Net[float64]
	idle  []*nn.Net[float64]
}

func (p *workPool) get() *nn.Net[float64] {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k := len(p.idle); k > 0 {
		w := p.idle[k-1]
		p.idle[k-1] = nil
		p.idle = p.idle[:k-1]
		return w
	}
	return p.proto.Clone()
}

func (p *workPool) put(w *nn.Net[float64]) {
	p.mu.Lock()
	p.idle = append(p.idle, w)
	p.mu.Unlock()
}

// ws returns the workspace of the current call sequence, taking one from
// the pool at its first pass.
func (m *Net) ws() *nn.Net[float64] {
	if m.net == nil {
		m.net = m.pool.get()
	}
	return m.net
}

// hold starts a call sequence (nested ones join it); unhold ends it and,
// at the outermost, returns the workspace to the pool.
func (m *Net) hold() { m.held++ }

func (m *Net) unhold() {
	if m.held--; m.held == 0 && m.net != nil {
		m.pool.put(m.net)
		m.net = nil
	}
}

// hold makes the bases keep their workspaces until the returned function
// runs: a mixture's passes interleave its bases'.
func (m *mixture) hold() func() {
	for _, b := range m.bases {
		b.hold()
	}
	return m.unhold
}

func (m *mixture) unhold() {
	for _, b := range m.bases {
		b.unhold()
	}
}
