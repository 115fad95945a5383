package optim

import (
	"unsafe"

	"hgpsim/internal/vec"
)

// NewPayload returns a payload of kind carrying v and mass: in Vec for
// float64, in Vec32 for float32, so that a behaviour written over F sends
// without branching on it.
func NewPayload[F vec.Float](kind Kind, v []F, mass float64) Payload {
	p := Payload{Kind: kind, Mass: mass}
	if is64[F]() {
		p.Vec = reslice[float64](v)
	} else {
		p.Vec32 = reslice[float32](v)
	}
	return p
}

// VecOf returns p's vector in F: Vec for float64, Vec32 for float32 (nil
// when p carries its vector in the other precision, or none).
func VecOf[F vec.Float](p *Payload) []F {
	if is64[F]() {
		return reslice[F](p.Vec)
	}
	return reslice[F](p.Vec32)
}

// Len returns the length of p's vector, in whichever precision it is.
func (p *Payload) Len() int { return len(p.Vec) + len(p.Vec32) }

// is64 reports whether F is float64 (otherwise it is float32).
func is64[F vec.Float]() bool { return unsafe.Sizeof(F(0)) == 8 }

// reslice views s as a slice of T, which must be F itself: generic code
// cannot convert a []float64 to a []F even where F is float64. A nil s
// stays nil.
func reslice[T, F vec.Float](s []F) []T {
	if s == nil {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
