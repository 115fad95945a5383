package optim

import (
	"hgpsim/internal/vec"
)

// NewPayload returns a payload of kind carrying v and mass: in Vec for
// float64, in Vec32 for float32, so that a behaviour written over F sends
// without branching on it.
func NewPayload[F vec.Float](kind Kind, v []F, mass float64) Payload {
	p := Payload{Kind: kind, Mass: mass}
	if vec.Is64[F]() {
		p.Vec = vec.View[float64](v)
	} else {
		p.Vec32 = vec.View[float32](v)
	}
	return p
}

// VecOf returns p's vector in F: Vec for float64, Vec32 for float32 (nil
// when p carries its vector in the other precision, or none).
func VecOf[F vec.Float](p *Payload) []F {
	if vec.Is64[F]() {
		return vec.View[F](p.Vec)
	}
	return vec.View[F](p.Vec32)
}

// Len returns the length of p's vector, in whichever precision it is.
func (p *Payload) Len() int { return len(p.Vec) + len(p.Vec32) }
