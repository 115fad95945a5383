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
type workPool[F Float] struct {
	mu    sync.Mutex
	proto *nn.Net[F]
	idle  []*nn.Net[F]
}

func (p *workPool[F]) get() *nn.Net[F] {
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

func (p *workPool[F]) put(w *nn.Net[F]) {
	p.mu.Lock()
	p.idle = append(p.idle, w)
	p.mu.Unlock()
}

// ws returns the workspace of the current call sequence, taking one from
// the pool at its first pass.
func (m *Net[F]) ws() *nn.Net[F] {
	if m.net == nil {
		m.net = m.pool.get()
	}
	return m.net
}

// hold starts a call sequence (nested ones join it); unhold ends it and,
// at the outermost, returns the workspace to the pool.
func (m *Net[F]) hold() { m.held++ }

func (m *Net[F]) unhold() {
	if m.held--; m.held == 0 && m.net != nil {
		m.pool.put(m.net)
		m.net = nil
	}
}

// hold makes the bases keep their workspaces until unhold: a mixture's
// passes interleave its bases'.
func (m *mixture[F]) hold() {
	for _, b := range m.bases {
		b.hold()
	}
}

func (m *mixture[F]) unhold() {
	for _, b := range m.bases {
		b.unhold()
	}
}
