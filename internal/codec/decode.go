package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"unsafe"
)

// maxDepth bounds the nesting of messages a decoder follows, so that
// hostile input cannot exhaust the stack.
const maxDepth = 64

var errTruncated = errors.New("codec: truncated input")

// Unmarshal decodes b into v, a non-nil pointer to a struct, which it
// resets first. Fields b holds that v's type does not know are skipped.
func Unmarshal(b []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("codec: cannot decode into a %T, only a pointer to a struct", v)
	}
	l, err := layoutOf(rv.Elem().Type())
	if err != nil {
		return err
	}
	rv.Elem().SetZero()
	return l.decode(b, rv.Elem(), 0)
}

func (l *layout) decode(b []byte, v reflect.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("codec: messages nested deeper than %d", maxDepth)
	}
	p := unsafe.Pointer(v.UnsafeAddr()) // decoding writes addressable values only
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errTruncated
		}
		b = b[n:]
		num, wt := key>>3, int(key&7)
		if num == 0 || num > 1<<29-1 {
			return fmt.Errorf("codec: field number %d", num)
		}
		i, ok := l.byNum[int(num)]
		if !ok {
			var err error
			if b, err = skip(b, wt); err != nil {
				return err
			}
			continue
		}
		var err error
		if f := &l.fields[i]; f.direct {
			b, err = f.decodeAt(b, wt, unsafe.Add(p, f.offset))
		} else {
			b, err = f.decode(b, wt, f.of(v), depth)
		}
		if err != nil {
			err = fmt.Errorf("field %d of %v: %w", num, v.Type(), err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// skip returns b after a field of wire type wt that nobody reads.
func skip(b []byte, wt int) ([]byte, error) {
	switch wt {
	case wtVarint:
		_, rest, err := varint(b)
		return rest, err
	case wtFixed64:
		return fixed(b, 8)
	case wtBytes:
		_, rest, err := bytesOf(b)
		return rest, err
	case 5: // fixed32
		return fixed(b, 4)
	}
	return nil, fmt.Errorf("codec: wire type %d", wt)
}

func fixed(b []byte, n int) ([]byte, error) {
	if len(b) < n {
		return nil, errTruncated
	}
	return b[n:], nil
}

func varint(b []byte) (uint64, []byte, error) {
	x, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errTruncated
	}
	return x, b[n:], nil
}

func bytesOf(b []byte) ([]byte, []byte, error) {
	n, b, err := varint(b)
	if err != nil {
		return nil, nil, err
	}
	if n > uint64(len(b)) {
		return nil, nil, errTruncated
	}
	return b[:n], b[n:], nil
}

func (f *field) decode(b []byte, wt int, v reflect.Value, depth int) ([]byte, error) {
	if f.direct {
		return f.decodeAt(b, wt, unsafe.Pointer(v.UnsafeAddr()))
	}
	if f.kind == kInts && wt == wtVarint { // one unpacked element
		return f.decodeInts(b, v, 1)
	}
	if want := wireType(f.kind); wt != want {
		return nil, fmt.Errorf("wire type %d, want %d", wt, want)
	}
	data, rest, err := bytesOf(b)
	if err != nil {
		return nil, err
	}
	switch f.kind {
	case kInts:
		_, err = f.decodeInts(data, v, -1)
	case kStrings:
		grown(v).SetString(string(data))
	case kByteses:
		if e := grown(v); len(data) > 0 {
			e.SetBytes(append([]byte(nil), data...))
		}
	case kStruct:
		err = f.layout().decode(data, v, depth+1)
	case kPtr:
		if v.IsNil() {
			v.Set(reflect.New(f.elem))
		}
		err = f.layout().decode(data, v.Elem(), depth+1)
	case kStructs:
		if f.ptrs {
			e := reflect.New(f.elem)
			grown(v).Set(e)
			err = f.layout().decode(data, e.Elem(), depth+1)
			break
		}
		// Decoded in place: no element is allocated on its own.
		err = f.layout().decode(data, grown(v), depth+1)
	case kMap:
		err = f.decodeEntry(data, v, depth)
	}
	return rest, err
}

// decodeInts appends packed varints of b to the slice v: all of them
// (count < 0), or one, returning what follows.
func (f *field) decodeInts(b []byte, v reflect.Value, count int) ([]byte, error) {
	for k := 0; len(b) > 0 && (count < 0 || k < count); k++ {
		x, rest, err := varint(b)
		if err != nil {
			return nil, err
		}
		e := grown(v)
		if i := int64(x); e.OverflowInt(i) {
			return nil, fmt.Errorf("%d overflows %v", i, e.Type())
		}
		e.SetInt(int64(x))
		b = rest
	}
	return b, nil
}

// decodeEntry decodes one map entry (key 1, value 2) into the map v.
func (f *field) decodeEntry(b []byte, v reflect.Value, depth int) error {
	k := reflect.New(v.Type().Key()).Elem()
	e := reflect.New(v.Type().Elem()).Elem()
	for len(b) > 0 {
		key, rest, err := varint(b)
		if err != nil {
			return err
		}
		switch num, wt := key>>3, int(key&7); {
		case num == 1 && wt == wtBytes:
			var s []byte
			s, rest, err = bytesOf(rest)
			k.SetString(string(s))
		case num == 2:
			rest, err = f.value.decode(rest, wt, e, depth+1)
		default:
			rest, err = skip(rest, wt)
		}
		if err != nil {
			return err
		}
		b = rest
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	v.SetMapIndex(k, e)
	return nil
}

// grown appends a zero element to the slice v, a settable value, and
// returns it: the slice grows by doubling, as append does, and no element
// is allocated on its own.
func grown(v reflect.Value) reflect.Value {
	n := v.Len()
	v.Grow(1)
	v.SetLen(n + 1)
	e := v.Index(n)
	e.SetZero()
	return e
}
