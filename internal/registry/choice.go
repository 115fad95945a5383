package registry

// Choice is a plug-in selected in a scenario: its registered name and its
// parameters, a pointer to the plug-in's parameter struct.
//
// In a scenario file a Choice under the key `kind` is the kind of its
// section, and the kind's parameters sit beside it in the same mapping:
//
//	network:
//	  kind: stochastic-directed
//	  delta_min: 0.4
//
// Under any other key a Choice is either the kind's name alone (defaults
// for every parameter) or a mapping with its own `kind`:
//
//	links: bernoulli
//	links: {kind: burst, length: 20}
//
// A key that is not a parameter of the chosen kind is an error naming its
// line (package scenarios decodes).
type Choice[T any] struct {
	Name   string
	Params T
}

// Choose returns the choice of a registered kind with default parameters.
// It is for defaults the program names itself: an unknown kind panics.
func Choose[T any](name string) Choice[T] {
	return Choice[T]{Name: name, Params: Of[T]().MustNew(name)}
}

// Chooser is the non-generic view of a *Choice[T], for decoders and
// documentation.
type Chooser interface {
	// Axis is the registry the choice draws from.
	Axis() Axis
	// Kind is the chosen name ("" before a choice).
	Kind() string
	// Choose switches to a registered kind. Parameters already set for
	// the same kind are kept, so a file or an override refines defaults.
	Choose(name string) error
	// ParamsValue is the chosen kind's parameter struct (a pointer).
	ParamsValue() any
}

// Axis implements Chooser.
func (c *Choice[T]) Axis() Axis { return Of[T]() }

// Kind implements Chooser.
func (c *Choice[T]) Kind() string { return c.Name }

// ParamsValue implements Chooser.
func (c *Choice[T]) ParamsValue() any { return c.Params }

// Choose implements Chooser.
func (c *Choice[T]) Choose(name string) error {
	e, err := Of[T]().Lookup(name)
	if err != nil {
		return err
	}
	if name != c.Name || any(c.Params) == nil {
		c.Name, c.Params = name, e.New()
	}
	return nil
}

// KindName is the name shown as a default by Params.
func (c Choice[T]) KindName() string { return c.Name }
