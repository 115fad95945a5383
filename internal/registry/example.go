package registry

// Exampler is implemented by a plug-in's parameter struct when naming the
// kind in a scenario, everything else at its defaults, is not a valid
// scenario: an edge list needs its edges, a crash its nodes, an experiment
// the data it runs on. Example returns the smallest valid scenario, in
// YAML, that selects the kind. The tests that cover every registered kind
// decode, validate and run it; kinds without one are covered with their
// defaults, so a new plug-in is tested without editing a test.
type Exampler interface {
	Example() string
}

// Example implements Axis.
func (r *Registry[T]) Example(kind string) string {
	e, err := r.Lookup(kind)
	if err != nil {
		return ""
	}
	if ex, ok := any(e.New()).(Exampler); ok {
		return ex.Example()
	}
	return ""
}
