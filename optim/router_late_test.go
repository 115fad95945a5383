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

// A float32 payload is copied once for its delayed receivers too, and it
// costs 4 bytes an element where a float64 one costs 8.
func TestRouterFloat32Payloads(t *testing.T) {
	nw := buildNet(t, net("fully-connected"), 5, 1)
	traffic := func(p Payload) Traffic {
		var tr Traffic
		r := NewRouter(nw)
		port := NewPort(nw, 0)
		Push(port, port.Open("p", 0, 0).Links, p)
		r.Open(0, false, nil)
		r.Deliver(0, port, &tr, nil)
		return tr
	}
	const d = 1000
	t64 := traffic(NewPayload(KindModel, make([]float64, d), 1))
	t32 := traffic(NewPayload(KindModel, make([]float32, d), 1))
	if t64.Messages != 4 || t32.Messages != 4 || t64.Bytes != 4*(8*d+16) || t32.Bytes != 4*(4*d+16) {
		t.Errorf("4 pushes of %d elements: %+v in float64, %+v in float32", d, t64, t32)
	}

	if err := nw.SetFailures([]registry.Choice[graph.Failure]{{Name: "delay", Params: &graph.Delay{Prob: 1, Min: 2, Max: 2}}}); err != nil {
		t.Fatal(err)
	}
	r := NewRouter(nw)
	port := NewPort(nw, 0)
	round := port.Open("p", 0, 0)
	v := []float32{1, 2, 3}
	Send(port, round.Links, NewPayload(KindModel, v, 0))
	r.Open(0, false, nil)
	r.Deliver(0, port, &Traffic{}, nil)
	late := r.Late()
	if len(late) < 2 {
		t.Fatalf("%d delayed messages, want one per link to the others", len(late))
	}
	v[0] = 9
	for _, m := range late {
		if m.Msg.Vec != nil || &m.Msg.Vec32[0] != &late[0].Msg.Vec32[0] || &m.Msg.Vec32[0] == &v[0] || m.Msg.Vec32[0] != 1 {
			t.Fatalf("delayed payloads %v / %v (to %d) do not share one copy of what was sent", m.Msg.Vec, m.Msg.Vec32, m.To)
		}
	}
	// In flight across a checkpoint: the state encoding keeps them.
	b, err := EncodeState(late)
	if err != nil {
		t.Fatal(err)
	}
	var back []LateMessage
	if err := DecodeState(b, &back); err != nil || len(back) != len(late) || back[0].Msg.Vec32[2] != 3 || back[0].Msg.Vec != nil {
		t.Fatalf("late messages through a checkpoint: %+v, %v", back, err)
	}
}
