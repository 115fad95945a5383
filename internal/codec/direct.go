package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// Scalars, strings, bytes and vectors of an addressable struct are read
// and written through their address rather than through reflect.Value,
// whose field access costs more than encoding a number: these kinds are
// most fields of most messages.

// isDirect reports whether f is read and written through its address.
func (f *field) isDirect() bool {
	switch f.kind {
	case kInt, kSint, kUint, kBool, kFloat, kString, kBytes, kFloats, kFloats32:
		return true
	}
	return false
}

// load returns the varint or fixed64 of the scalar at p.
func (f *field) load(p unsafe.Pointer) uint64 {
	var i int64
	switch f.rk {
	case reflect.Int:
		i = int64(*(*int)(p))
	case reflect.Int8:
		i = int64(*(*int8)(p))
	case reflect.Int16:
		i = int64(*(*int16)(p))
	case reflect.Int32:
		i = int64(*(*int32)(p))
	case reflect.Int64:
		i = *(*int64)(p)
	case reflect.Uint:
		return uint64(*(*uint)(p))
	case reflect.Uint8:
		return uint64(*(*uint8)(p))
	case reflect.Uint16:
		return uint64(*(*uint16)(p))
	case reflect.Uint32:
		return uint64(*(*uint32)(p))
	case reflect.Uint64:
		return *(*uint64)(p)
	case reflect.Bool:
		if *(*bool)(p) {
			return 1
		}
		return 0
	case reflect.Float64:
		return math.Float64bits(*(*float64)(p))
	}
	if f.kind == kSint {
		return uint64(i<<1) ^ uint64(i>>63)
	}
	return uint64(i)
}

// lenAt returns the length of the string, bytes or vector at p.
func (f *field) lenAt(p unsafe.Pointer) int {
	switch f.kind {
	case kString:
		return len(*(*string)(p))
	case kBytes:
		return len(*(*[]byte)(p))
	case kFloats32:
		return 4 * len(*(*[]float32)(p))
	}
	return 8 * len(*(*[]float64)(p))
}

// sizeAt returns the bytes f takes with the value at p, its key
// included; always writes zero values too (map entries do).
func (f *field) sizeAt(p unsafe.Pointer, always bool) int {
	switch f.kind {
	case kString, kBytes, kFloats, kFloats32:
		return delimited(len(f.tag), f.lenAt(p), always)
	}
	x := f.load(p) // −0 is not zero: its bits are kept
	switch {
	case x == 0 && !always:
		return 0
	case f.kind == kFloat:
		return len(f.tag) + 8
	}
	return len(f.tag) + varintLen(x)
}

func (f *field) appendAt(b []byte, p unsafe.Pointer, always bool) []byte {
	switch f.kind {
	case kString, kBytes, kFloats, kFloats32:
		n := f.lenAt(p)
		if n == 0 && !always {
			return b
		}
		b = appendVarint(append(b, f.tag...), uint64(n))
		switch f.kind {
		case kString:
			return append(b, *(*string)(p)...)
		case kBytes:
			return append(b, *(*[]byte)(p)...)
		case kFloats32:
			return appendFloats(b, *(*[]float32)(p))
		}
		return appendFloats(b, *(*[]float64)(p))
	}
	x := f.load(p)
	switch {
	case x == 0 && !always:
		return b
	case f.kind == kFloat:
		return binary.LittleEndian.AppendUint64(append(b, f.tag...), x)
	}
	return appendVarint(append(b, f.tag...), x)
}

// store sets the scalar at p to the decoded x, refusing a value that does
// not fit its type.
func (f *field) store(p unsafe.Pointer, x uint64) error {
	i := int64(x)
	if f.kind == kSint {
		i = int64(x>>1) ^ -int64(x&1)
	}
	fits := true
	switch f.rk {
	case reflect.Int:
		*(*int)(p), fits = int(i), int64(int(i)) == i
	case reflect.Int8:
		*(*int8)(p), fits = int8(i), int64(int8(i)) == i
	case reflect.Int16:
		*(*int16)(p), fits = int16(i), int64(int16(i)) == i
	case reflect.Int32:
		*(*int32)(p), fits = int32(i), int64(int32(i)) == i
	case reflect.Int64:
		*(*int64)(p) = i
	case reflect.Uint:
		*(*uint)(p), fits = uint(x), uint64(uint(x)) == x
	case reflect.Uint8:
		*(*uint8)(p), fits = uint8(x), uint64(uint8(x)) == x
	case reflect.Uint16:
		*(*uint16)(p), fits = uint16(x), uint64(uint16(x)) == x
	case reflect.Uint32:
		*(*uint32)(p), fits = uint32(x), uint64(uint32(x)) == x
	case reflect.Uint64:
		*(*uint64)(p) = x
	case reflect.Bool:
		*(*bool)(p) = x != 0
	case reflect.Float64:
		*(*float64)(p) = math.Float64frombits(x)
	}
	if !fits {
		if f.kind == kUint {
			return fmt.Errorf("%d overflows %v", x, f.typ)
		}
		return fmt.Errorf("%d overflows %v", i, f.typ)
	}
	return nil
}

// decodeAt decodes one occurrence of f, of wire type wt, into the value
// at p, returning what follows.
func (f *field) decodeAt(b []byte, wt int, p unsafe.Pointer) ([]byte, error) {
	switch {
	case f.kind == kFloats && wt == wtFixed64: // one unpacked element
		if len(b) < 8 {
			return nil, errTruncated
		}
		xs := (*[]float64)(p)
		*xs = append(*xs, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		return b[8:], nil
	case f.kind == kFloats32 && wt == wtFixed32: // one unpacked element
		if len(b) < 4 {
			return nil, errTruncated
		}
		xs := (*[]float32)(p)
		*xs = append(*xs, math.Float32frombits(binary.LittleEndian.Uint32(b)))
		return b[4:], nil
	case wt != wireType(f.kind):
		return nil, fmt.Errorf("wire type %d, want %d", wt, wireType(f.kind))
	}
	switch f.kind {
	case kFloat:
		if len(b) < 8 {
			return nil, errTruncated
		}
		return b[8:], f.store(p, binary.LittleEndian.Uint64(b))
	case kString, kBytes, kFloats, kFloats32:
	default:
		x, rest, err := varint(b)
		if err == nil {
			err = f.store(p, x)
		}
		return rest, err
	}
	data, rest, err := bytesOf(b)
	if err != nil {
		return nil, err
	}
	switch f.kind {
	case kString:
		*(*string)(p) = string(data)
	case kBytes:
		if len(data) > 0 {
			*(*[]byte)(p) = append([]byte(nil), data...)
		}
	case kFloats:
		err = decodePacked((*[]float64)(p), data, "doubles")
	case kFloats32:
		err = decodePacked((*[]float32)(p), data, "floats")
	}
	if err != nil {
		return nil, err
	}
	return rest, nil
}

// decodePacked appends the packed little-endian values of data to *xs;
// what names them in an error.
func decodePacked[F float](xs *[]F, data []byte, what string) error {
	size := int(unsafe.Sizeof(F(0)))
	if len(data)%size != 0 {
		return fmt.Errorf("packed %s of %d bytes", what, len(data))
	}
	n := len(data) / size
	if n == 0 {
		return nil
	}
	old := len(*xs)
	*xs = append(*xs, make([]F, n)...)
	if littleEndian {
		copy(floatBytes((*xs)[old:]), data)
		return nil
	}
	for i := range n {
		if size == 8 {
			(*xs)[old+i] = F(math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:])))
		} else {
			(*xs)[old+i] = F(math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])))
		}
	}
	return nil
}
