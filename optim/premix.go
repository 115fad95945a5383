package optim

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

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
// the kernel walks a Mix's Terms as they are. In float32 its Coef is the
// float64 weight rounded once to float32 (TermsOf does it).
type Term[F vec.Float] = vec.Term[F]

// Mix is Dst = Σ_t Coef_t·Vec_t, summed in the order of Terms, each
// product and sum rounded to F (vec.Combine's order contract).
type Mix[F vec.Float] struct {
	Dst   []F
	Terms []Term[F]
}

// Premixer is a behaviour whose Receive begins with linear combinations,
// in F, of what it received. Receive must equal ApplyMixes(Premix(r, in))
// followed by ReceiveMixed(r, in). A driver asks for Premixer[float64]
// and Premixer[float32].
type Premixer[F vec.Float] interface {
	Behaviour
	// Premix returns the combinations the round needs. It must not change
	// the behaviour's state beyond the buffers it returns, which stay the
	// behaviour's own until ReceiveMixed returns.
	Premix(r *Round, in []Message) []Mix[F]
	// ReceiveMixed finishes Receive with the combinations computed.
	ReceiveMixed(r *Round, in []Message) error
}

// ApplyMixes computes each mix: Dst = 0, then Dst += Coef·Vec term by term.
// This is the arithmetic every driver uses, coordinate by coordinate. A
// receiver mixing on its own streams each sent vector once from memory,
// which one scaled addition per term does faster than vec.Combine (which
// walks all the vectors at once); the blocked mixing, whose sent blocks
// are in cache, uses vec.Combine, whose order contract gives the same bits.
func ApplyMixes[F vec.Float](ms []Mix[F]) {
	for _, m := range ms {
		clear(m.Dst)
		for _, t := range m.Terms {
			vec.AddScaled(m.Dst, t.Coef, t.Vec[:len(m.Dst)])
		}
	}
}

// The blocked mixing computes all receivers' mixes block of coordinates by
// block, so that the block of every sent vector is read from a core's L2
// cache by all its receivers (some 60 each at n = 100) rather than from
// memory. How fast L2 delivers those blocks is what bounds it: the
// kernel's arithmetic runs faster on data in L1. Sent vectors are mostly separate
// page-aligned allocations, so the same block of each falls on the same
// cache sets, and the blocks evict each other before every receiver has
// used them; each block of every sent vector is therefore first copied
// into a staging buffer that packs the blocks with a gap between them. The
// copy is exact, so the sums are ApplyMixes' bit for bit.
const (
	// mixBlockBytes is the block one goroutine stages and mixes at a
	// time: 2 KiB of every sent vector (256 float64 or 512 float32
	// coordinates), about 200 KiB for a hundred senders, inside a core's
	// L2 cache with room for the receivers' blocks and terms.
	mixBlockBytes = 2048
	// mixGapBytes separates the staged blocks, so that the same
	// coordinates of successive senders fall on different cache sets.
	mixGapBytes = 256
)

// mixStage is the scratch of the blocked mixing, kept by the driver
// between rounds because it is rebuilt every round (the senders' vectors
// change) and would otherwise be a few hundred KiB of garbage per round.
type mixStage[F vec.Float] struct {
	slot  map[*F]int // a sent vector's place in sent, by its first element
	sent  [][]F      // the distinct sent vectors, each its longest view
	terms []Term[F]  // all mixes' terms, pointed at the staging buffer
	mixes []Mix[F]   // all mixes in order, with those terms
	buf   []F        // the staging buffer (see applyMixesBlocked)
}

// applyMixesBlocked computes every client's mixes block of coordinates by
// block, the blocks spread over up to parallel goroutines, with st as
// scratch (the zero mixStage will do). Every coordinate is computed by one
// goroutine with ApplyMixes' arithmetic, so the result does not depend on
// parallel or the scheduling.
func applyMixesBlocked[F vec.Float](st *mixStage[F], mixes [][]Mix[F], parallel int) {
	if st.slot == nil {
		st.slot = map[*F]int{}
	}
	size := int(unsafe.Sizeof(F(0)))
	mixBlock, mixGap := mixBlockBytes/size, mixGapBytes/size
	defer func() {
		// Drop the references to this round's vectors.
		clear(st.slot)
		clear(st.sent)
		clear(st.terms)
		clear(st.mixes)
		st.sent, st.terms, st.mixes = st.sent[:0], st.terms[:0], st.mixes[:0]
	}()
	longest, terms := 0, 0
	for _, ms := range mixes {
		for _, m := range ms {
			longest = max(longest, len(m.Dst))
			terms += len(m.Terms)
			for _, t := range m.Terms {
				if len(t.Vec) < len(m.Dst) {
					// Checked here: the kernel would read the staged
					// copy past the term's end unnoticed.
					panic(fmt.Sprintf("optim: a mix term of %d coordinates for %d", len(t.Vec), len(m.Dst)))
				}
				if len(t.Vec) == 0 {
					continue
				}
				k, ok := st.slot[&t.Vec[0]]
				if !ok {
					st.slot[&t.Vec[0]] = len(st.sent)
					st.sent = append(st.sent, t.Vec)
				} else if len(t.Vec) > len(st.sent[k]) {
					st.sent[k] = t.Vec
				}
			}
		}
	}
	blocks := (longest + mixBlock - 1) / mixBlock
	p := max(min(parallel, blocks), 1)

	// Goroutine g stages block element i of sent vector k at
	// buf[g·region + k·width + i], so a term's staged Vec is
	// buf[k·width:] for every goroutine, which reads it from offset
	// g·region.
	width := mixBlock + mixGap
	region := len(st.sent) * width
	if n := p * region; cap(st.buf) < n {
		st.buf = make([]F, n)
	}
	buf := st.buf[:p*region]
	stagedLen := (p-1)*region + mixBlock
	st.terms = slices.Grow(st.terms, terms)
	for _, ms := range mixes {
		for _, m := range ms {
			first := len(st.terms)
			for _, t := range m.Terms {
				if len(t.Vec) > 0 {
					k := st.slot[&t.Vec[0]]
					t.Vec = buf[k*width : k*width+stagedLen]
				}
				st.terms = append(st.terms, t)
			}
			st.mixes = append(st.mixes, Mix[F]{Dst: m.Dst, Terms: st.terms[first:len(st.terms):len(st.terms)]})
		}
	}
	staged := st.mixes
	block := func(g, b int) {
		lo, base := b*mixBlock, g*region
		for k, v := range st.sent {
			if lo < len(v) {
				copy(buf[base+k*width:base+k*width+mixBlock], v[lo:min(lo+mixBlock, len(v))])
			}
		}
		for _, m := range staged {
			if lo < len(m.Dst) {
				vec.Combine(m.Dst[lo:min(lo+mixBlock, len(m.Dst))], m.Terms, base)
			}
		}
	}
	if p == 1 {
		for b := range blocks {
			block(0, b)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(p)
	for g := range p {
		go func() {
			defer wg.Done()
			for b := int(next.Add(1) - 1); b < blocks; b = int(next.Add(1) - 1) {
				block(g, b)
			}
		}()
	}
	wg.Wait()
}

// TermsOf returns buf refilled with Coef·Vec[off:off+d] for the messages
// whose coefficient coef(m) is not skipped: Vec the message's vector in F
// (VecOf), Coef the coefficient rounded to F.
func TermsOf[F vec.Float](buf []Term[F], in []Message, off, d int, coef func(m *Message) (float64, bool)) []Term[F] {
	buf = buf[:0]
	for k := range in {
		m := &in[k]
		if c, ok := coef(m); ok {
			buf = append(buf, Term[F]{Coef: F(c), Vec: VecOf[F](&m.Payload)[off : off+d]})
		}
	}
	return buf
}
