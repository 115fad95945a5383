package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"unsafe"
)

// Marshal returns the encoding of v, a struct or a pointer to one (a nil
// pointer encodes as no bytes). It fails only when v's type has a field
// without an encoding.
func Marshal(v any) ([]byte, error) { return Append(nil, v) }

// Append appends the encoding of v (see Marshal) to b.
func Append(b []byte, v any) ([]byte, error) {
	rv, l, err := structOf(v)
	if err != nil || l == nil {
		return b, err
	}
	b = slices.Grow(b, l.size(rv))
	return l.append(b, rv), nil
}

// Size returns the length of v's encoding.
func Size(v any) (int, error) {
	rv, l, err := structOf(v)
	if err != nil || l == nil {
		return 0, err
	}
	return l.size(rv), nil
}

// MustMarshal is Marshal for types known to encode (a programmer error
// otherwise): it panics on a type without an encoding.
func MustMarshal(v any) []byte {
	b, err := Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// structOf returns the struct v is or points to, with its layout (nil for
// a nil pointer).
func structOf(v any) (reflect.Value, *layout, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return rv, nil, nil
		}
		rv = rv.Elem()
	} else if rv.Kind() == reflect.Struct {
		rv = addressable(rv) // fields are read through their address
	}
	if rv.Kind() != reflect.Struct {
		return rv, nil, fmt.Errorf("codec: cannot encode a %T, only structs", v)
	}
	l, err := layoutOf(rv.Type())
	return rv, l, err
}

// layout returns the layout of f's struct type, which buildLayout has
// checked: the one it built, or, for a type that holds itself, the cached
// one.
func (f *field) layout() *layout {
	if f.sub != nil {
		return f.sub
	}
	l, err := layoutOf(f.elem)
	if err != nil {
		panic(fmt.Sprintf("codec: layout of checked type %v: %v", f.elem, err))
	}
	return l
}

// of returns field f of the struct v, which has an address: a field of
// an inlined struct by that address, since reflect would not let it be
// set through an embedded struct of an unexported type.
func (f *field) of(v reflect.Value) reflect.Value {
	if len(f.index) == 1 {
		return v.Field(f.index[0])
	}
	return reflect.NewAt(f.typ, unsafe.Add(addr(v), f.offset)).Elem()
}

// addr returns the address of v, which the encoder keeps addressable (a
// map value is copied first: see addressable).
func addr(v reflect.Value) unsafe.Pointer { return unsafe.Pointer(v.UnsafeAddr()) }

// addressable returns v, or a copy of it that has an address.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

func (l *layout) size(v reflect.Value) int {
	n, p := 0, addr(v)
	for i := range l.fields {
		f := &l.fields[i]
		if f.direct {
			n += f.sizeAt(unsafe.Add(p, f.offset), false)
		} else {
			n += f.size(f.of(v), false)
		}
	}
	return n
}

func (l *layout) append(b []byte, v reflect.Value) []byte {
	p := addr(v)
	for i := range l.fields {
		f := &l.fields[i]
		if f.direct {
			b = f.appendAt(b, unsafe.Add(p, f.offset), false)
		} else {
			b = f.append(b, f.of(v), false)
		}
	}
	return b
}

// size returns the bytes f takes with value v, its key included; always
// writes zero values too (map entries do).
func (f *field) size(v reflect.Value, always bool) int {
	if f.direct {
		return f.sizeAt(addr(v), always)
	}
	t := len(f.tag)
	switch f.kind {
	case kInts:
		return delimited(t, intsLen(v), always)
	case kStrings, kByteses:
		n := 0
		for i := range v.Len() {
			n += delimited(t, v.Index(i).Len(), true)
		}
		return n
	case kStruct:
		return delimited(t, f.layout().size(v), always)
	case kPtr:
		if v.IsNil() {
			return 0
		}
		return delimited(t, f.layout().size(v.Elem()), true)
	case kStructs:
		l, n := f.layout(), 0
		for i := range v.Len() {
			n += delimited(t, l.sizeElem(v.Index(i), f.ptrs), true)
		}
		return n
	case kMap:
		n := 0
		for _, k := range v.MapKeys() {
			n += delimited(t, f.entrySize(k, addressable(v.MapIndex(k))), true)
		}
		return n
	}
	panic("codec: unknown kind")
}

func (l *layout) sizeElem(e reflect.Value, ptr bool) int {
	if ptr {
		if e.IsNil() {
			return 0
		}
		e = e.Elem()
	}
	return l.size(e)
}

// entrySize is the size of a map entry's body: key (field 1) and value
// (field 2), both always written, as protoc's code does.
func (f *field) entrySize(k, v reflect.Value) int {
	return delimited(1, k.Len(), true) + f.value.size(v, true)
}

// delimited is the size of a length-delimited field of n bytes with a key
// of t bytes, 0 when empty and not always written.
func delimited(t, n int, always bool) int {
	if n == 0 && !always {
		return 0
	}
	return t + varintLen(uint64(n)) + n
}

func (f *field) append(b []byte, v reflect.Value, always bool) []byte {
	if f.direct {
		return f.appendAt(b, addr(v), always)
	}
	switch f.kind {
	case kInts:
		if v.Len() == 0 && !always {
			return b
		}
		b = appendVarint(append(b, f.tag...), uint64(intsLen(v)))
		for i := range v.Len() {
			b = appendVarint(b, uint64(v.Index(i).Int()))
		}
		return b
	case kStrings, kByteses:
		for i := range v.Len() {
			e := v.Index(i)
			b = appendVarint(append(b, f.tag...), uint64(e.Len()))
			if f.kind == kStrings {
				b = append(b, e.String()...)
			} else {
				b = append(b, e.Bytes()...)
			}
		}
		return b
	case kStruct:
		l := f.layout()
		n := l.size(v)
		if n == 0 && !always {
			return b
		}
		b = appendVarint(append(b, f.tag...), uint64(n))
		return l.append(b, v)
	case kPtr:
		if v.IsNil() {
			return b
		}
		l := f.layout()
		b = appendVarint(append(b, f.tag...), uint64(l.size(v.Elem())))
		return l.append(b, v.Elem())
	case kStructs:
		l := f.layout()
		for i := range v.Len() {
			e := v.Index(i)
			b = appendVarint(append(b, f.tag...), uint64(l.sizeElem(e, f.ptrs)))
			if f.ptrs {
				if e.IsNil() {
					continue
				}
				e = e.Elem()
			}
			b = l.append(b, e)
		}
		return b
	case kMap:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, c reflect.Value) int {
			switch as, cs := a.String(), c.String(); {
			case as < cs:
				return -1
			case as > cs:
				return 1
			}
			return 0
		})
		for _, k := range keys {
			e := addressable(v.MapIndex(k))
			b = appendVarint(append(b, f.tag...), uint64(f.entrySize(k, e)))
			b = appendVarint(append(b, 1<<3|wtBytes), uint64(k.Len()))
			b = append(b, k.String()...)
			b = f.value.append(b, e, true)
		}
		return b
	}
	panic("codec: unknown kind")
}

// intsLen is the body of a packed []int: a varint per element.
func intsLen(v reflect.Value) int {
	n := 0
	for i := range v.Len() {
		n += varintLen(uint64(v.Index(i).Int()))
	}
	return n
}

// littleEndian is set where a []float64 in memory is its packed encoding
// (bits little-endian), so that vectors are copied, not converted.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// float is an element type of the packed repeated fields: double
// (float64) and float (float32).
type float interface{ float32 | float64 }

// floatBytes returns the memory of xs (on a little-endian machine, its
// packed encoding).
func floatBytes[F float](xs []F) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), int(unsafe.Sizeof(F(0)))*len(xs))
}

func appendFloats[F float](b []byte, xs []F) []byte {
	if littleEndian {
		return append(b, floatBytes(xs)...)
	}
	for _, x := range xs {
		if unsafe.Sizeof(x) == 8 {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(x)))
		} else {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
		}
	}
	return b
}

func appendVarint(b []byte, x uint64) []byte { return binary.AppendUvarint(b, x) }

func varintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }
