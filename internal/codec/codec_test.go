package codec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

type inner struct {
	A int
	V []float64
}

type kindByte uint8

type everything struct {
	I      int                `wire:"1"`
	S      int64              `wire:"2,zigzag"`
	U      kindByte           `wire:"3"`
	B      bool               `wire:"4"`
	F      float64            `wire:"5"`
	Str    string             `wire:"6"`
	Raw    []byte             `wire:"7"`
	Vec    []float64          `wire:"8"`
	Ints   []int              `wire:"9"`
	Strs   []string           `wire:"10"`
	Blobs  [][]byte           `wire:"11"`
	In     inner              `wire:"12"`
	Ptr    *inner             `wire:"13"`
	List   []inner            `wire:"14"`
	PList  []*inner           `wire:"15"`
	Map    map[string]float64 `wire:"16"`
	MapIn  map[string]inner   `wire:"17"`
	Skip   int                `wire:"-"`
	hidden int
	Last   int32 `wire:"200"`
}

// TestBytesMatchProtowire checks the encoding against one built field by
// field with protowire, protobuf's own low-level encoder.
func TestBytesMatchProtowire(t *testing.T) {
	v := everything{I: -3, S: -2, U: 7, B: true, F: math.Copysign(0, -1), Str: "héllo", Raw: []byte{0, 1},
		Vec: []float64{1.5, math.Inf(-1)}, Ints: []int{1, 300, -1}, Strs: []string{"", "a"}, Blobs: [][]byte{{9}, nil},
		In: inner{A: 2}, Ptr: &inner{A: 5}, List: []inner{{A: 1}, {}}, PList: []*inner{nil, {V: []float64{2}}},
		Map: map[string]float64{"b": 0, "a": 2}, MapIn: map[string]inner{"k": {}}, Skip: 9, hidden: 4, Last: 1}
	var w []byte
	tag := func(n protowire.Number, t protowire.Type) { w = protowire.AppendTag(w, n, t) }
	msg := func(n protowire.Number, body []byte) { tag(n, protowire.BytesType); w = protowire.AppendBytes(w, body) }
	innerBytes := func(a int, vs []float64) []byte {
		var b []byte
		if a != 0 {
			b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), uint64(a))
		}
		if len(vs) > 0 {
			var p []byte
			for _, x := range vs {
				p = protowire.AppendFixed64(p, math.Float64bits(x))
			}
			b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), p)
		}
		return b
	}
	tag(1, protowire.VarintType)
	neg := int64(-3)
	w = protowire.AppendVarint(w, uint64(neg))
	tag(2, protowire.VarintType)
	w = protowire.AppendVarint(w, protowire.EncodeZigZag(-2))
	tag(3, protowire.VarintType)
	w = protowire.AppendVarint(w, 7)
	tag(4, protowire.VarintType)
	w = protowire.AppendVarint(w, 1)
	tag(5, protowire.Fixed64Type)
	w = protowire.AppendFixed64(w, math.Float64bits(math.Copysign(0, -1)))
	msg(6, []byte("héllo"))
	msg(7, []byte{0, 1})
	msg(8, innerBytes(0, v.Vec)[2:])
	var ints []byte
	for _, x := range v.Ints {
		ints = protowire.AppendVarint(ints, uint64(int64(x)))
	}
	msg(9, ints)
	msg(10, nil)
	msg(10, []byte("a"))
	msg(11, []byte{9})
	msg(11, nil)
	msg(12, innerBytes(2, nil))
	msg(13, innerBytes(5, nil))
	msg(14, innerBytes(1, nil))
	msg(14, nil)
	msg(15, nil)
	msg(15, innerBytes(0, []float64{2}))
	for _, k := range []string{"a", "b"} {
		var e []byte
		e = protowire.AppendBytes(protowire.AppendTag(e, 1, protowire.BytesType), []byte(k))
		e = protowire.AppendFixed64(protowire.AppendTag(e, 2, protowire.Fixed64Type), math.Float64bits(v.Map[k]))
		msg(16, e)
	}
	var e []byte
	e = protowire.AppendBytes(protowire.AppendTag(e, 1, protowire.BytesType), []byte("k"))
	e = protowire.AppendBytes(protowire.AppendTag(e, 2, protowire.BytesType), nil)
	msg(17, e)
	tag(200, protowire.VarintType)
	w = protowire.AppendVarint(w, 1)

	got, err := Marshal(&v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, w) {
		t.Fatalf("encoding\n got %x\nwant %x", got, w)
	}
	if n, _ := Size(v); n != len(got) {
		t.Errorf("Size %d, encoding has %d bytes", n, len(got))
	}
	var back everything
	if err := Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	// What does not survive: skipped and unexported fields, and empty
	// elements and vectors come back nil.
	v.Skip, v.hidden = 0, 0
	v.Blobs[1] = nil
	v.PList[0] = &inner{}
	if !reflect.DeepEqual(back, v) || math.Float64bits(back.F) != math.Float64bits(v.F) {
		t.Errorf("round trip\n got %+v\nwant %+v", back, v)
	}
}

func TestZeroIsEmpty(t *testing.T) {
	b, err := Marshal(everything{In: inner{V: []float64{}}, MapIn: map[string]inner{}})
	if err != nil || len(b) != 0 {
		t.Fatalf("zero value encodes as %x, %v", b, err)
	}
	var back everything
	back.I = 4
	if err := Unmarshal(nil, &back); err != nil || back.I != 0 {
		t.Errorf("decoding nothing gives %+v, %v: want a reset value", back, err)
	}
}

func TestNaNBitsKept(t *testing.T) {
	x := math.Float64frombits(0x7ff8_0000_dead_beef)
	b := MustMarshal(inner{V: []float64{x, 5e-324}})
	var back inner
	if err := Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(back.V[0]) != math.Float64bits(x) || back.V[1] != 5e-324 {
		t.Errorf("got %v", back.V)
	}
}

// TestUnknownAndUnpacked decodes what a newer or another encoder may send:
// fields it does not know, and repeated numbers written unpacked.
func TestUnknownAndUnpacked(t *testing.T) {
	var w []byte
	w = protowire.AppendFixed32(protowire.AppendTag(w, 7, protowire.Fixed32Type), 1)
	w = protowire.AppendFixed64(protowire.AppendTag(w, 2, protowire.Fixed64Type), math.Float64bits(3))
	w = protowire.AppendVarint(protowire.AppendTag(w, 1, protowire.VarintType), 8)
	w = protowire.AppendBytes(protowire.AppendTag(w, 9, protowire.BytesType), []byte("x"))
	var back inner
	if err := Unmarshal(w, &back); err != nil {
		t.Fatal(err)
	}
	if back.A != 8 || len(back.V) != 1 || back.V[0] != 3 {
		t.Errorf("got %+v", back)
	}
}

func TestOverflowAndWireType(t *testing.T) {
	var w []byte
	w = protowire.AppendVarint(protowire.AppendTag(w, 3, protowire.VarintType), 256)
	var e everything
	if err := Unmarshal(w, &e); err == nil {
		t.Error("256 decoded into a uint8")
	}
	w = protowire.AppendFixed64(protowire.AppendTag(nil, 1, protowire.Fixed64Type), 1)
	if err := Unmarshal(w, &e); err == nil {
		t.Error("a fixed64 decoded into an int")
	}
}

// TestHostileInput feeds truncations and random corruptions of a valid
// encoding: decoding may fail but must not panic.
func TestHostileInput(t *testing.T) {
	v := everything{I: 1, Str: "s", Vec: []float64{1, 2}, List: []inner{{A: 2, V: []float64{3}}},
		Map: map[string]float64{"a": 1}, MapIn: map[string]inner{"b": {A: 1}}, Ptr: &inner{A: 1}}
	b := MustMarshal(v)
	var back everything
	for n := range len(b) {
		_ = Unmarshal(b[:n], &back)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		c := append([]byte(nil), b...)
		for range 1 + r.IntN(4) {
			c[r.IntN(len(c))] = byte(r.Uint32())
		}
		_ = Unmarshal(c, &back)
	}
}

func TestBadTypes(t *testing.T) {
	type badMap struct{ M map[int]int }
	type dup struct {
		A int `wire:"1"`
		B int `wire:"1"`
	}
	type badZig struct {
		F float64 `wire:"1,zigzag"`
	}
	for _, v := range []any{3, badMap{}, dup{}, badZig{}, struct{ C chan int }{}} {
		if _, err := Marshal(v); err == nil {
			t.Errorf("%T encoded", v)
		}
	}
	if err := Unmarshal(nil, inner{}); err == nil {
		t.Error("decoded into a non-pointer")
	}
}

type extended struct {
	inner `wire:",inline"`
	Ref   int     `wire:"3"`
	List  []inner `wire:"4"`
}

// TestInline checks that an inlined struct's fields are numbered as the
// outer struct's: the outer encoding is the inner one plus its own fields,
// and the inner type decodes it, skipping what it does not know.
func TestInline(t *testing.T) {
	in := inner{A: 4, V: []float64{0.5}}
	b := MustMarshal(extended{inner: in, Ref: 9})
	want := append(MustMarshal(in), 3<<3, 9)
	if !bytes.Equal(b, want) {
		t.Fatalf("got %x, want %x", b, want)
	}
	var back extended
	if err := Unmarshal(b, &back); err != nil || back.Ref != 9 || !reflect.DeepEqual(back.inner, in) {
		t.Errorf("round trip %+v, %v", back, err)
	}
	type outer struct {
		extended `wire:",inline"`
	}
	o := outer{extended{inner: in, List: []inner{{A: 1}}}}
	var oBack outer
	if err := Unmarshal(MustMarshal(o), &oBack); err != nil || !reflect.DeepEqual(oBack, o) {
		t.Errorf("nested inline round trip %+v, %v", oBack, err)
	}
	var only inner
	if err := Unmarshal(b, &only); err != nil || !reflect.DeepEqual(only, in) {
		t.Errorf("as the inlined type: %+v, %v", only, err)
	}
	type clash struct {
		inner `wire:",inline"`
		B     int `wire:"2"`
	}
	if _, err := Marshal(clash{}); err == nil {
		t.Error("a number used by the inlined struct was accepted")
	}
}
