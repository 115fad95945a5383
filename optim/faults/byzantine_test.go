package faults

import (
	"math"
	"testing"

	"hgpsim/optim"
)

// postings records what reaches the driver's outbox.
type postings struct {
	got map[int]optim.Payload
}

func (p *postings) Weights(to []int) []float64 { return make([]float64, len(to)) }

func (p *postings) Post(to int, _ float64, _ bool, pl optim.Payload) { p.got[to] = pl }

// A byzantine client scales float32 model vectors as it does float64 ones
// (each element times float32(scale)), copying each sent vector once, and
// leaves what it sends itself, the mass, and other kinds intact.
func TestByzantineCorruptsFloat32(t *testing.T) {
	rec := &postings{got: map[int]optim.Payload{}}
	c := &corrupting{Outbox: rec, self: 0, scale: -0.5}
	z := []float32{1, -3, 0x1p-149, float32(math.Inf(1))}
	p := optim.NewPayload(optim.KindModel, z, 0.75)
	for to := range 3 {
		c.Post(to, 0, true, p)
	}
	c.Post(3, 0, false, optim.NewPayload(optim.KindDual, z, 0))
	if got := rec.got[0]; &got.Vec32[0] != &z[0] {
		t.Error("the client's message to itself was not its own vector")
	}
	one, two := rec.got[1], rec.got[2]
	if one.Vec != nil || len(one.Vec32) != len(z) || &one.Vec32[0] != &two.Vec32[0] || &one.Vec32[0] == &z[0] || one.Mass != 0.75 {
		t.Fatalf("to the others: %+v and %+v", one, two)
	}
	for k, v := range z {
		if want := v * float32(-0.5); math.Float32bits(one.Vec32[k]) != math.Float32bits(want) {
			t.Errorf("element %d: %v, want %v", k, one.Vec32[k], want)
		}
	}
	if got := rec.got[3]; &got.Vec32[0] != &z[0] {
		t.Error("a dual vector was corrupted")
	}
	if z[0] != 1 || z[1] != -3 {
		t.Errorf("the sender's vector changed: %v", z)
	}
}
