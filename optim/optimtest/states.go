package optimtest

import (
	"bytes"
	"strings"
	"testing"

	"hgpsim/optim"
)

// Reject checks that to refuses the state b with an error containing want
// and is left as it was.
func Reject(t *testing.T, what string, to optim.Stateful, b []byte, want string) {
	t.Helper()
	before, err := to.SaveState()
	if err != nil {
		t.Fatal(err)
	}
	if err := to.LoadState(b); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want an error containing %q", what, err, want)
	}
	if after, _ := to.SaveState(); !bytes.Equal(before, after) {
		t.Errorf("%s: the refused state changed the part", what)
	}
}

// CheckServerStates checks the states a server (0) and its clients 1 and
// 2 saved: each loads into a freshly built part and saves again byte for
// byte; truncated, garbage and empty states and the states of other parts
// are refused. fresh builds the parts.
func CheckServerStates(t *testing.T, states [][]byte, fresh func() []optim.Stateful) {
	t.Helper()
	for i, p := range fresh()[:3] {
		if err := p.LoadState(states[i]); err != nil {
			t.Fatalf("client %d's own state: %v", i, err)
		}
		if b, err := p.SaveState(); err != nil || !bytes.Equal(b, states[i]) {
			t.Fatalf("client %d saves another state than it loaded (%v)", i, err)
		}
	}
	parts := fresh()
	srv, c1, c2 := parts[0], parts[1], parts[2]
	Reject(t, "truncated server", srv, states[0][:len(states[0])/2], "decoding")
	Reject(t, "truncated client", c1, states[1][:len(states[1])/2], "decoding")
	Reject(t, "garbage", srv, []byte("not a state"), "decoding")
	Reject(t, "empty", c1, nil, "decoding")
	Reject(t, "server into a client", c1, states[0], "")
	Reject(t, "client into the server", srv, states[1], "")
	Reject(t, "client 1 into client 2", c2, states[1], "client 1")
}
