package optim

// Wrapped is the base of fault wrappers: it forwards Observe and Result to
// the wrapped behaviour, so evaluation and reports see through the fault.
type Wrapped struct{ Inner Behaviour }

// Observe implements Observer.
func (w Wrapped) Observe() Stats {
	if o, ok := w.Inner.(Observer); ok {
		return o.Observe()
	}
	return Stats{}
}

// Result implements Resulter.
func (w Wrapped) Result() Result {
	if r, ok := w.Inner.(Resulter); ok {
		return r.Result()
	}
	return Result{}
}
