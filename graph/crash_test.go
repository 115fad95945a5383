package graph

import (
	"slices"
	"strings"
	"testing"
)

// The crash failure's state: last by default; reinit restarts the listed
// nodes in the round they come back, and needs a round to come back in.
func TestCrashState(t *testing.T) {
	for _, c := range []struct {
		crash Crash
		err   string
	}{
		{Crash{Nodes: []int{1}, At: 2, Recover: 5}, ""},
		{Crash{Nodes: []int{1}, At: 2, Recover: 5, State: "last"}, ""},
		{Crash{Nodes: []int{1}, At: 2, Recover: 5, State: "reinit"}, ""},
		{Crash{Nodes: []int{1}, At: 2, State: "reinit"}, "needs recover"},
		{Crash{Nodes: []int{1}, At: 2, Recover: 5, State: "fresh"}, "want last or reinit"},
	} {
		err := c.crash.Validate(3)
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.crash, err, c.err)
		}
	}
	nw := &Network{Failures: []Failure{&Crash{Nodes: []int{1, 2}, At: 2, Recover: 5, State: "reinit"}, &Crash{Nodes: []int{0}, At: 1, Recover: 3}}}
	if got := nw.ReinitNodes(); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("ReinitNodes = %v, want [1 2]", got)
	}
	for tick := uint64(0); tick < 8; tick++ {
		for i := range 3 {
			want := tick == 5 && i > 0
			if got := nw.Reinitializes(i, tick); got != want {
				t.Errorf("node %d at tick %d: Reinitializes %v, want %v", i, tick, got, want)
			}
		}
	}
}
