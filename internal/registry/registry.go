package registry

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Entry is one registered plug-in.
type Entry[T any] struct {
	Name string
	// Doc is one paragraph: what the kind is and where it comes from.
	Doc string
	// New returns fresh parameters with defaults. Its dynamic value is a
	// pointer to a struct (possibly without fields).
	New func() T
	// Caps are the capabilities the plug-in declared at registration
	// (what they mean is its axis's business, e.g. an algorithm that runs
	// in float32).
	Caps []string
}

// Can reports whether the plug-in declared capability c.
func (e *Entry[T]) Can(c string) bool { return slices.Contains(e.Caps, c) }

// Registry maps names to the plug-ins of one axis.
type Registry[T any] struct {
	axis    string
	key     string // the scenario key that names the kind ("kind", "estimator", …)
	mu      sync.Mutex
	entries map[string]*Entry[T]
	sealed  bool
}

// Axis is the read-only view of any registry, for listing and documentation.
type Axis interface {
	// Name is the axis, e.g. "network".
	Name() string
	// Key is the scenario key that selects a kind on this axis.
	Key() string
	// Kinds lists the registered names in sorted order.
	Kinds() []string
	// Describe returns the plug-in's description and its parameters.
	Describe(kind string) (doc string, params []Param, ok bool)
	// Example returns the plug-in's example scenario (see Exampler), or
	// "" when its defaults need none.
	Example(kind string) string
}

var (
	axesMu sync.Mutex
	axes   []Axis
	byType = map[reflect.Type]any{}
)

// New returns an empty registry for an axis whose plug-ins implement T and
// whose kind is selected by the scenario key key. It adds the registry to
// the list returned by Axes and makes it findable with Of[T]; each axis has
// its own interface type, so New panics on a second registry for T.
func New[T any](axis, key string) *Registry[T] {
	r := &Registry[T]{axis: axis, key: key, entries: map[string]*Entry[T]{}}
	t := reflect.TypeFor[T]()
	axesMu.Lock()
	defer axesMu.Unlock()
	if _, dup := byType[t]; dup {
		panic(fmt.Sprintf("registry: a second registry for %v", t))
	}
	byType[t] = r
	axes = append(axes, r)
	return r
}

// Axes returns every registry created so far, sorted by axis name.
func Axes() []Axis {
	axesMu.Lock()
	defer axesMu.Unlock()
	out := slices.Clone(axes)
	sort.Slice(out, func(a, b int) bool { return out[a].Name() < out[b].Name() })
	return out
}

// Register adds a plug-in with the capabilities it declares (see
// Entry.Caps). It is meant for init functions and panics on a duplicate or
// empty name and after the registry has been read. It does not call
// newParams (defaults may use other registries, filled by other init
// functions); Check does, from a test.
func (r *Registry[T]) Register(name, doc string, newParams func() T, caps ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		panic(fmt.Sprintf("registry: %s %q registered after the registry was used", r.axis, name))
	}
	if name == "" || strings.ContainsAny(name, " \t\n") {
		panic(fmt.Sprintf("registry: bad %s name %q", r.axis, name))
	}
	if _, dup := r.entries[name]; dup {
		panic(fmt.Sprintf("registry: %s %q registered twice", r.axis, name))
	}
	r.entries[name] = &Entry[T]{Name: name, Doc: doc, New: newParams, Caps: slices.Clone(caps)}
}

func (r *Registry[T]) seal() {
	r.mu.Lock()
	r.sealed = true
	r.mu.Unlock()
}

// Name implements Axis.
func (r *Registry[T]) Name() string { return r.axis }

// Key implements Axis.
func (r *Registry[T]) Key() string { return r.key }

// Kinds implements Axis.
func (r *Registry[T]) Kinds() []string {
	r.seal()
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// KindsThatCan lists, sorted, the registered names that declared
// capability c.
func (r *Registry[T]) KindsThatCan(c string) []string {
	var names []string
	for _, n := range r.Kinds() {
		if r.entries[n].Can(c) {
			names = append(names, n)
		}
	}
	return names
}

// Lookup returns the plug-in registered as name, or an error that lists the
// registered names.
func (r *Registry[T]) Lookup(name string) (*Entry[T], error) {
	r.seal()
	if e, ok := r.entries[name]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("unknown %s kind %q (registered: %s)", r.axis, name, strings.Join(r.Kinds(), ", "))
}

// Has reports whether name is registered.
func (r *Registry[T]) Has(name string) bool {
	r.seal()
	_, ok := r.entries[name]
	return ok
}

// MustNew returns fresh parameters of a registered kind; for defaults that
// the program itself names, so a missing kind is a programming error.
func (r *Registry[T]) MustNew(name string) T {
	e, err := r.Lookup(name)
	if err != nil {
		panic(err)
	}
	return e.New()
}

// Describe implements Axis.
func (r *Registry[T]) Describe(kind string) (string, []Param, bool) {
	r.seal()
	e, ok := r.entries[kind]
	if !ok {
		return "", nil, false
	}
	return e.Doc, Params(e.New()), true
}

// Of returns the registry made by New[T], or nil.
func Of[T any]() *Registry[T] {
	axesMu.Lock()
	defer axesMu.Unlock()
	r, _ := byType[reflect.TypeFor[T]()].(*Registry[T])
	return r
}

// Check verifies every registered plug-in of every axis: its constructor
// returns a non-nil pointer to a struct, and its parameters have a doc tag
// each. Tests call it; a failure is a programming error in a plug-in.
func Check() error {
	for _, a := range Axes() {
		for _, kind := range a.Kinds() {
			if err := a.(interface{ check(string) error }).check(kind); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Registry[T]) check(kind string) error {
	e, err := r.Lookup(kind)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(e.New())
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("registry: %s %q: New must return a non-nil pointer to a struct, got %T", r.axis, kind, e.New())
	}
	if strings.TrimSpace(e.Doc) == "" {
		return fmt.Errorf("registry: %s %q has no description", r.axis, kind)
	}
	for _, p := range Params(e.New()) {
		if strings.TrimSpace(p.Doc) == "" {
			return fmt.Errorf("registry: %s %q: parameter %s has no doc tag", r.axis, kind, p.Key)
		}
	}
	return nil
}
