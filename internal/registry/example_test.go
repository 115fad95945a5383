package registry

import "testing"

type shape interface{ Sides() int }

type square struct{}

func (*square) Sides() int { return 4 }

type polygon struct {
	N int `yaml:"n" doc:"sides, ≥ 3"`
}

func (*polygon) Sides() int { return 0 }

// Example implements Exampler: a polygon has no default number of sides.
func (*polygon) Example() string { return "shape: {kind: polygon, n: 5}\n" }

var shapes = New[shape]("shape", "kind")

func init() {
	shapes.Register("square", "Four equal sides.", func() shape { return &square{} })
	shapes.Register("polygon", "Any number of sides.", func() shape { return &polygon{} })
}

// A kind's example is its parameters' Example, and "" for a kind without
// one or an unknown kind.
func TestExample(t *testing.T) {
	var a Axis = shapes
	for kind, want := range map[string]string{"polygon": "shape: {kind: polygon, n: 5}\n", "square": "", "circle": ""} {
		if got := a.Example(kind); got != want {
			t.Errorf("Example(%q) = %q, want %q", kind, got, want)
		}
	}
}
