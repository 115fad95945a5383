package actors

import (
	"math/bits"

	"hgpsim/optim"
)

// inbox collects the messages of one round and hands them out ordered by
// sender without sorting: arrivals are appended as they come, a bitset over
// the senders marks who delivered, and pos[from] remembers where. Closing the
// round walks the set bits in ascending order, which costs O(n/64 + messages)
// and allocates nothing once the buffers have grown.
type inbox struct {
	arrived []optim.Message // in arrival order
	pos     []int32         // pos[from]: index of from's message in arrived
	seen    []uint64        // bit from set: from delivered this round
	sorted  []optim.Message // by sender, handed to Receive
}

func newInbox(n int) inbox {
	return inbox{pos: make([]int32, n), seen: make([]uint64, (n+63)/64)}
}

// add records one delivery; it reports false for a second message from the
// same sender in one round, which the protocol never produces.
func (b *inbox) add(m optim.Message) bool {
	w, bit := m.From>>6, uint64(1)<<(m.From&63)
	if b.seen[w]&bit != 0 {
		return false
	}
	b.seen[w] |= bit
	b.pos[m.From] = int32(len(b.arrived))
	b.arrived = append(b.arrived, m)
	return true
}

// take returns the round's messages ordered by sender and empties the
// inbox. The result is valid until the next take.
func (b *inbox) take() []optim.Message {
	out := b.sorted[:0]
	for w, word := range b.seen {
		for word != 0 {
			from := w<<6 | bits.TrailingZeros64(word)
			out = append(out, b.arrived[b.pos[from]])
			word &= word - 1
		}
		b.seen[w] = 0
	}
	clear(b.arrived) // drop references to other clients' buffers
	b.arrived = b.arrived[:0]
	b.sorted = out
	return out
}

// release drops the references held by the last take.
func (b *inbox) release() {
	clear(b.sorted)
	b.sorted = b.sorted[:0]
}

// reset empties the inbox (a new phase).
func (b *inbox) reset() {
	clear(b.seen)
	clear(b.arrived)
	b.arrived = b.arrived[:0]
	b.release()
}
