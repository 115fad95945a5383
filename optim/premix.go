package optim

import (
	"sync"
	"sync/atomic"

	"hgpsim/internal/vec"
)

// Mixing received vectors (push-sum's Σ_j p_ij z_j, HGP's Σ_j coef_ij u_j)
// is most of the work of a round at n ≥ 100: every client streams its
// in-neighbours' whole vectors, and the same vectors are streamed again by
// every other receiver. A driver that holds every client (the sequential
// one) can instead mix all receivers block of coordinates by block of
// coordinates, so that one block of every sent vector stays in cache while
// all receivers use it. A behaviour makes that possible by splitting its
// Receive in two: Premix says which combinations it needs, ReceiveMixed
// does the rest once they are computed. Each coordinate is summed in the
// same order with the same operations either way (ApplyMixes), so the
// results are bit-identical whichever driver runs the behaviour.

// Term is one Coef·Vec of a Mix: len(Vec) == len(Dst) of its Mix, and Vec
// never overlaps a Dst. It is the mixing kernel's own term type, so that
// the kernel walks a Mix's Terms as they are.
type Term = vec.Term

// Mix is Dst = Σ_t Coef_t·Vec_t, summed in the order of Terms.
type Mix struct {
	Dst   []float64
	Terms []Term
}

// Premixer is a behaviour whose Receive begins with linear combinations
// of what it received. Receive must equal ApplyMixes(Premix(r, in))
// followed by ReceiveMixed(r, in).
type Premixer interface {
	Behaviour
	// Premix returns the combinations the round needs. It must not change
	// the behaviour's state beyond the buffers it returns, which stay the
	// behaviour's own until ReceiveMixed returns.
	Premix(r *Round, in []Message) []Mix
	// ReceiveMixed finishes Receive with the combinations computed.
	ReceiveMixed(r *Round, in []Message) error
}

// ApplyMixes computes each mix: Dst = 0, then Dst += Coef·Vec term by term.
// This is the arithmetic every driver uses, coordinate by coordinate.
func ApplyMixes(ms []Mix) {
	for _, m := range ms {
		mixRange(m, 0, len(m.Dst))
	}
}

// mixRange computes coordinates [lo, hi) of m. vec.Combine sums each
// coordinate exactly as clearing it and adding Coef·Vec term by term with
// vec.AddScaled does (its order contract), keeping the sums in registers
// meanwhile.
func mixRange(m Mix, lo, hi int) {
	vec.Combine(m.Dst[lo:hi], m.Terms, lo)
}

// mixBlock is the block of coordinates the blocked mixing computes for all
// receivers at once: 4 KiB of every sent vector, so that the blocks of a
// hundred senders take under half of a core's L2 cache (1 MiB here), the
// rest left to the receivers' blocks and the terms. Mixing is bound by how
// fast the senders' blocks come from L2; at 1,024 coordinates they spill.
const mixBlock = 512

// applyMixesBlocked computes every client's mixes block of coordinates by
// block, the blocks spread over up to parallel goroutines. Every coordinate
// is computed by one goroutine with ApplyMixes' arithmetic, so the result
// does not depend on parallel or the scheduling.
func applyMixesBlocked(mixes [][]Mix, parallel int) {
	longest := 0
	for _, ms := range mixes {
		for _, m := range ms {
			longest = max(longest, len(m.Dst))
		}
	}
	blocks := (longest + mixBlock - 1) / mixBlock
	block := func(b int) {
		lo := b * mixBlock
		for _, ms := range mixes {
			for _, m := range ms {
				if lo < len(m.Dst) {
					mixRange(m, lo, min(lo+mixBlock, len(m.Dst)))
				}
			}
		}
	}
	p := min(parallel, blocks)
	if p <= 1 {
		for b := range blocks {
			block(b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(p)
	for range p {
		go func() {
			defer wg.Done()
			for b := int(next.Add(1) - 1); b < blocks; b = int(next.Add(1) - 1) {
				block(b)
			}
		}()
	}
	wg.Wait()
}

// termsOf returns buf refilled with Coef·Vec[off:off+d] for the messages
// whose coefficient coef(m) is not skipped.
func termsOf(buf []Term, in []Message, off, d int, coef func(m *Message) (float64, bool)) []Term {
	buf = buf[:0]
	for k := range in {
		m := &in[k]
		if c, ok := coef(m); ok {
			buf = append(buf, Term{Coef: c, Vec: m.Vec[off : off+d]})
		}
	}
	return buf
}
