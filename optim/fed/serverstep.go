package fed

import (
	"fmt"
	"slices"
)

// ServerStep is the server-side hook of the FedAvg family (FedAdam,
// FedYogi and FedAdagrad are built on it): called once when the server is
// built, it declares on st every value it keeps across rounds and returns
// the step. The server saves and restores what was declared together with
// its global model, so a step that keeps nothing else resumes exactly
// from a checkpoint; a value kept anywhere else (a slice of its own, a
// field) restarts from its initial value on resume.
type ServerStep func(st *ServerState) StepFunc

// StepFunc moves the global model x by the pseudo-gradient delta, the
// mean of the updates x_i − x of the clients whose uploads arrived
// (FedAvg's step is x += delta). It is not called in a round in which no
// upload arrived. delta is valid for the call.
type StepFunc func(x, delta []float64)

// ServerState is the state a server step declared: named vectors, each
// saved and restored with the server.
type ServerState struct {
	d     int
	names []string
	vecs  [][]float64
	err   error
}

// Vec declares the state vector name, of the model's length, with every
// entry init, and returns it; the step keeps and updates it in place.
func (st *ServerState) Vec(name string, init float64) []float64 { return st.declare(name, st.d, init) }

// Scalar declares the state number name set to init and returns it.
func (st *ServerState) Scalar(name string, init float64) *float64 {
	return &st.declare(name, 1, init)[0]
}

func (st *ServerState) declare(name string, n int, init float64) []float64 {
	if slices.Contains(st.names, name) && st.err == nil {
		st.err = fmt.Errorf("the server step declares its state %q twice", name)
	}
	v := make([]float64, n)
	for j := range v {
		v[j] = init
	}
	st.names = append(st.names, name)
	st.vecs = append(st.vecs, v)
	return v
}

// NamedVec is one declared state vector as a checkpoint holds it.
type NamedVec struct {
	Name string
	V    []float64
}

// save returns the declared state.
func (st *ServerState) save() []NamedVec {
	if st == nil {
		return nil
	}
	out := make([]NamedVec, len(st.names))
	for k, name := range st.names {
		out[k] = NamedVec{name, st.vecs[k]}
	}
	return out
}

// check returns an error, naming who, unless saved, a state save
// returned, fits st.
func (st *ServerState) check(who string, saved []NamedVec) error {
	var names []string
	if st != nil {
		names = st.names
	}
	got := make([]string, len(saved))
	for k, nv := range saved {
		got[k] = nv.Name
	}
	if !slices.Equal(got, names) {
		return fmt.Errorf("%s: a saved server step state %q for one with %q", who, got, names)
	}
	for k, nv := range saved {
		if len(nv.V) != len(st.vecs[k]) {
			return fmt.Errorf("%s: the saved state %q has length %d, want %d", who, nv.Name, len(nv.V), len(st.vecs[k]))
		}
	}
	return nil
}

// load restores a state check accepted.
func (st *ServerState) load(saved []NamedVec) {
	for k, nv := range saved {
		copy(st.vecs[k], nv.V)
	}
}
