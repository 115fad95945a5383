package codec

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// vec32 is a message with a float32 vector beside a float64 one, as a
// payload carries one or the other.
type vec32 struct {
	V   []float64 `wire:"2"`
	V32 []float32 `wire:"4"`
}

// TestFloat32MatchesProtowire checks a []float32 against protobuf's packed
// repeated float, built with protowire: fixed32 elements, 4 bytes each,
// every bit kept (−0, a NaN payload, the smallest subnormal).
func TestFloat32MatchesProtowire(t *testing.T) {
	xs := []float32{1, float32(math.Copysign(0, -1)), math.Float32frombits(0x7fc0_beef), 0x1p-149, -math.MaxFloat32}
	var body []byte
	for _, x := range xs {
		body = protowire.AppendFixed32(body, math.Float32bits(x))
	}
	want := protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), body)
	got := MustMarshal(vec32{V32: xs})
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding\n%x\nprotowire gives\n%x", got, want)
	}
	if n, _ := Size(vec32{V32: xs}); n != len(want) || len(body) != 4*len(xs) {
		t.Errorf("Size %d, body %d bytes: want %d and %d", n, len(body), len(want), 4*len(xs))
	}
	var back vec32
	if err := Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back.V != nil || len(back.V32) != len(xs) {
		t.Fatalf("decoded %+v", back)
	}
	for i := range xs {
		if math.Float32bits(back.V32[i]) != math.Float32bits(xs[i]) {
			t.Errorf("element %d: %#x, sent %#x", i, math.Float32bits(back.V32[i]), math.Float32bits(xs[i]))
		}
	}
	// Half the bytes of the same vector in float64.
	xs64 := make([]float64, 1000)
	n64, _ := Size(vec32{V: xs64})
	n32, _ := Size(vec32{V32: make([]float32, 1000)})
	if n64 != 8000+3 || n32 != 4000+3 {
		t.Errorf("1,000 elements: %d bytes in float64, %d in float32", n64, n32)
	}
}

// TestFloat32UnpackedAndBad decodes float32 elements written unpacked
// (fixed32 each, as another encoder may) and refuses a packed body whose
// length is not a multiple of 4, or a fixed64 element.
func TestFloat32UnpackedAndBad(t *testing.T) {
	var w []byte
	w = protowire.AppendFixed32(protowire.AppendTag(w, 4, protowire.Fixed32Type), math.Float32bits(1.5))
	w = protowire.AppendFixed32(protowire.AppendTag(w, 4, protowire.Fixed32Type), math.Float32bits(-2))
	var back vec32
	if err := Unmarshal(w, &back); err != nil || len(back.V32) != 2 || back.V32[0] != 1.5 || back.V32[1] != -2 {
		t.Fatalf("unpacked: %+v, %v", back, err)
	}
	bad := protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), []byte{1, 2, 3, 4, 5})
	if err := Unmarshal(bad, &back); err == nil {
		t.Error("a packed body of 5 bytes decoded")
	}
	bad = protowire.AppendFixed64(protowire.AppendTag(nil, 4, protowire.Fixed64Type), 1)
	if err := Unmarshal(bad, &back); err == nil {
		t.Error("a fixed64 decoded into a []float32")
	}
}
