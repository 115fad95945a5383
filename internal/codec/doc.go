// Package codec encodes Go structs in the protobuf wire format, by
// reflection, so that a plain-data type (a phase's arguments, a client's
// result, a payload) crosses a process boundary without a generated
// message or a hand-written conversion mirroring it.
//
// A struct is a message and each exported field one of its fields. The
// field number is the field's `wire:"n"` tag, or its 1-based position in
// the struct when untagged; `wire:"-"` leaves a field out,
// `wire:"n,zigzag"` encodes a signed integer as protobuf's sint64 does
// (small negative numbers in one byte), and `wire:",inline"` on an
// embedded struct numbers its fields as the outer struct's own (a wire
// form that extends a type: the type inlined, plus fields of its own). The encoding of each Go type is
// the one protoc gives the matching proto3 field, so a struct whose tags
// follow a .proto message encodes to the same bytes as the generated code:
//
//	Go field                     proto3 field
//	int, int8 … int64            int64 (sint64 with zigzag)
//	uint, uint8 … uint64         uint64 (an enum too)
//	bool, float64, string        bool, double, string
//	[]byte                       bytes
//	[]float64, []int, []int64    packed repeated double, int64
//	[]float32                    packed repeated float
//	[]string, [][]byte           repeated string, bytes
//	struct, *struct              a message field
//	[]struct, []*struct          repeated message
//	map[string]V                 map<string, V>, entries in key order
//
// As in proto3, zero scalars and empty strings, bytes, slices and maps
// are not written, and they decode as zero values: a zero-length slice or
// map comes back nil. A nil pointer is not written, a non-nil one always
// is; a struct field (not a pointer) is written unless all its fields are
// zero, so a zero struct costs nothing. Every float64 and float32 keeps its bits (−0 and NaN payloads
// included). Decoding skips fields it does not know and fails on a wire
// type that does not match the field's or a number that overflows it, so
// no input makes it panic.
//
// Layouts are computed once per type and cached; encoding the same value
// twice gives the same bytes.
//
// codec imports the standard library only.
package codec
