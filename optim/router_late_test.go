package optim

import (
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/registry"
)

// A payload delayed on several links is copied once (the sender reuses
// its buffer), and the receivers share the copy.
func TestRouterCopiesADelayedPayloadOnce(t *testing.T) {
	nw := buildNet(t, net("fully-connected"), 5, 1)
	if err := nw.SetFailures([]registry.Choice[graph.Failure]{{Name: "delay", Params: &graph.Delay{Prob: 1, Min: 2, Max: 2}}}); err != nil {
		t.Fatal(err)
	}
	r := NewRouter(nw)
	port := NewPort(nw, 0)
	round := port.Open("p", 0, 0)
	vec := []float64{1, 2, 3}
	Send(port, round.Links, Payload{Kind: KindModel, Vec: vec})
	r.Open(0, false, nil)
	r.Deliver(0, port, &Traffic{}, nil)
	late := r.Late()
	if len(late) < 2 {
		t.Fatalf("%d delayed messages, want one per link to the others", len(late))
	}
	vec[0] = 9 // the sender reuses its buffer
	for _, m := range late {
		if &m.Msg.Vec[0] != &late[0].Msg.Vec[0] || &m.Msg.Vec[0] == &vec[0] || m.Msg.Vec[0] != 1 {
			t.Fatalf("delayed payloads %v (to %d) do not share one copy of what was sent", m.Msg.Vec, m.To)
		}
	}
}
