package actors

import "sync"

// workers is a proto.actor Dispatcher that runs mailboxes on long-lived
// goroutines. The default dispatcher starts a new goroutine each time an idle
// mailbox gets a message, i.e. for every client at every step; that
// goroutine starts with a small stack and grows it (copying) as soon as the
// step calls into the model, which cost about a tenth of a round at 100
// clients. Here a goroutine that has run a mailbox waits for the next one
// and keeps its grown stack. The pool never blocks and has no size limit:
// when no worker is idle, Schedule starts a new one, so a behaviour that
// hangs holds one goroutine and never the runtime.
type workers struct {
	mu     sync.Mutex
	wake   sync.Cond
	queue  []func() // FIFO: queue[head:]
	head   int
	idle   int // workers waiting on wake
	closed bool
}

func newWorkers() *workers {
	w := &workers{}
	w.wake.L = &w.mu
	return w
}

// Schedule implements actor.Dispatcher.
func (w *workers) Schedule(fn func()) {
	w.mu.Lock()
	// Each queued function has an idle worker of its own, so none is left
	// waiting behind a busy worker.
	if !w.closed && w.idle > len(w.queue)-w.head {
		w.queue = append(w.queue, fn)
		w.mu.Unlock()
		w.wake.Signal()
		return
	}
	w.mu.Unlock()
	go w.work(fn)
}

// Throughput implements actor.Dispatcher: messages a mailbox processes
// before yielding (proto.actor's default).
func (w *workers) Throughput() int { return 300 }

func (w *workers) work(fn func()) {
	for {
		fn()
		fn = nil // an idle worker must not keep the last mailbox (and its actor) alive
		w.mu.Lock()
		for w.head == len(w.queue) && !w.closed {
			w.idle++
			w.wake.Wait()
			w.idle--
		}
		if w.head == len(w.queue) { // closed and drained
			w.mu.Unlock()
			return
		}
		fn = w.queue[w.head]
		w.queue[w.head] = nil
		w.head++
		if w.head == len(w.queue) {
			w.queue, w.head = w.queue[:0], 0
		}
		w.mu.Unlock()
	}
}

// close lets the idle workers exit; later Schedules start plain goroutines.
func (w *workers) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.wake.Broadcast()
}
