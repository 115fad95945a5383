package codec

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Wire types of the protobuf encoding.
const (
	wtVarint  = 0
	wtFixed64 = 1
	wtBytes   = 2
	wtFixed32 = 5
)

// kind is how one field is encoded.
type kind uint8

const (
	kInt      kind = iota + 1 // signed varint, two's complement
	kSint                     // signed varint, zigzag
	kUint                     // unsigned varint
	kBool                     // varint 0 or 1
	kFloat                    // fixed64
	kString                   // length-delimited
	kBytes                    // length-delimited
	kFloats                   // packed fixed64
	kInts                     // packed varints
	kStrings                  // repeated length-delimited
	kByteses                  // repeated length-delimited
	kStruct                   // a message, always written
	kPtr                      // a message, written when not nil
	kStructs                  // repeated message ([]T or []*T)
	kMap                      // map<string, V>: repeated entry message
	kFloats32                 // packed fixed32
)

// field is one encoded field of a struct.
type field struct {
	index  []int        // in the struct (a path through inlined structs)
	offset uintptr      // of the field in the struct
	typ    reflect.Type // of the field
	rk     reflect.Kind // of the field's type
	direct bool         // read and written through its address (see direct.go)
	num    int
	kind   kind
	tag    []byte       // the key: number and wire type, as a varint
	elem   reflect.Type // struct type of kStruct, kPtr, kStructs
	sub    *layout      // elem's layout (nil for a type that holds itself: see field.layout)
	ptrs   bool         // kStructs of []*T
	value  *field       // kMap: the value, as entry field 2
}

// layout is a struct type's fields, in number order.
type layout struct {
	fields []field
	byNum  map[int]int // field number → index in fields
}

// layouts caches a layout per struct type: types are few and fixed, and
// a layout depends on nothing but its type.
var layouts sync.Map // reflect.Type → *layout or error

func layoutOf(t reflect.Type) (*layout, error) {
	if v, ok := layouts.Load(t); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*layout), nil
	}
	l, err := buildLayout(t, map[reflect.Type]bool{})
	if err != nil {
		layouts.Store(t, err)
		return nil, err
	}
	v, _ := layouts.LoadOrStore(t, l)
	if err, bad := v.(error); bad {
		return nil, err
	}
	return v.(*layout), nil
}

// buildLayout checks t and every struct type it holds (once: seen breaks
// recursive types), then returns t's layout.
func buildLayout(t reflect.Type, seen map[reflect.Type]bool) (*layout, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("codec: %v is not a struct", t)
	}
	seen[t] = true
	l := &layout{byNum: map[int]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		opt, err := parseTag(sf.Tag.Get("wire"), i+1)
		if err != nil {
			return nil, fmt.Errorf("codec: %v.%s: %w", t, sf.Name, err)
		}
		// An embedded struct of an unexported type may be inlined: its
		// exported fields are settable through it.
		if !sf.IsExported() && !(opt.inline && sf.Anonymous) {
			continue
		}
		var fs []field
		switch {
		case opt.skip:
			continue
		case opt.inline:
			if !sf.Anonymous || sf.Type.Kind() != reflect.Struct || seen[sf.Type] {
				return nil, fmt.Errorf("codec: %v.%s: inline needs an embedded struct", t, sf.Name)
			}
			in, err := buildLayout(sf.Type, seen)
			if err != nil {
				return nil, err
			}
			delete(seen, sf.Type) // inlining it twice is fine; containing itself is not
			for _, f := range in.fields {
				f.index = append([]int{i}, f.index...)
				f.offset += sf.Offset
				fs = append(fs, f)
			}
		default:
			f, err := fieldOf(sf.Type, opt.zigzag)
			if err != nil {
				return nil, fmt.Errorf("codec: %v.%s: %w", t, sf.Name, err)
			}
			f.index, f.num, f.tag = []int{i}, opt.num, keyOf(opt.num, f.kind)
			f.offset, f.typ, f.rk = sf.Offset, sf.Type, sf.Type.Kind()
			f.direct = f.isDirect()
			for _, sub := range []*field{&f, f.value} {
				if sub == nil || sub.elem == nil || seen[sub.elem] {
					continue
				}
				l, err := buildLayout(sub.elem, seen)
				if err != nil {
					return nil, err
				}
				sub.sub = l
			}
			fs = append(fs, f)
		}
		for _, f := range fs {
			if _, dup := l.byNum[f.num]; dup {
				return nil, fmt.Errorf("codec: %v.%s: field number %d used twice", t, sf.Name, f.num)
			}
			l.byNum[f.num] = len(l.fields)
			l.fields = append(l.fields, f)
		}
	}
	// Number order is the order protoc's code writes fields in.
	sortFields(l)
	return l, nil
}

func sortFields(l *layout) {
	fs := l.fields
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].num < fs[j-1].num; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	for i, f := range fs {
		l.byNum[f.num] = i
	}
}

// tagOptions is what a field's wire tag says.
type tagOptions struct {
	num                  int
	zigzag, skip, inline bool
}

// parseTag reads `wire:"n[,zigzag]"`, `wire:",inline"` or `wire:"-"`; a
// tag without a number numbers the field by its position.
func parseTag(tag string, position int) (tagOptions, error) {
	if tag == "-" {
		return tagOptions{skip: true}, nil
	}
	name, opts, _ := strings.Cut(tag, ",")
	o := tagOptions{num: position}
	if name != "" {
		n, err := strconv.Atoi(name)
		if err != nil || n < 1 || n > 1<<29-1 || (n >= 19000 && n <= 19999) {
			return o, fmt.Errorf("bad field number %q", name)
		}
		o.num = n
	}
	switch opts {
	case "":
	case "zigzag":
		o.zigzag = true
	case "inline":
		o.inline = true
	default:
		return o, fmt.Errorf("unknown tag option %q", opts)
	}
	return o, nil
}

// fieldOf returns the encoding of a Go type.
func fieldOf(t reflect.Type, zigzag bool) (field, error) {
	signed := func(k kind) kind {
		if zigzag {
			return kSint
		}
		return k
	}
	if zigzag && !isInt(t) && !(t.Kind() == reflect.Slice && isInt(t.Elem())) {
		return field{}, fmt.Errorf("zigzag on %v", t)
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return field{kind: signed(kInt)}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return field{kind: kUint}, nil
	case reflect.Bool:
		return field{kind: kBool}, nil
	case reflect.Float64:
		return field{kind: kFloat}, nil
	case reflect.String:
		return field{kind: kString}, nil
	case reflect.Struct:
		return field{kind: kStruct, elem: t}, nil
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			return field{kind: kPtr, elem: t.Elem()}, nil
		}
	case reflect.Slice:
		e := t.Elem()
		switch {
		case e.Kind() == reflect.Uint8:
			return field{kind: kBytes}, nil
		case e.Kind() == reflect.Float64:
			return field{kind: kFloats}, nil
		case e.Kind() == reflect.Float32:
			return field{kind: kFloats32}, nil
		case isInt(e) && !zigzag:
			return field{kind: kInts}, nil
		case e.Kind() == reflect.String:
			return field{kind: kStrings}, nil
		case e.Kind() == reflect.Slice && e.Elem().Kind() == reflect.Uint8:
			return field{kind: kByteses}, nil
		case e.Kind() == reflect.Struct:
			return field{kind: kStructs, elem: e}, nil
		case e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct:
			return field{kind: kStructs, elem: e.Elem(), ptrs: true}, nil
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			break
		}
		v, err := fieldOf(t.Elem(), false)
		if err != nil || v.kind == kMap || v.kind == kPtr || v.kind == kStructs || v.kind == kStrings || v.kind == kByteses {
			break
		}
		v.num, v.tag = 2, keyOf(2, v.kind)
		v.typ, v.rk = t.Elem(), t.Elem().Kind()
		v.direct = v.isDirect()
		return field{kind: kMap, value: &v}, nil
	}
	return field{}, fmt.Errorf("type %v has no encoding", t)
}

func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

// wireType returns the wire type a kind is written with.
func wireType(k kind) int {
	switch k {
	case kInt, kSint, kUint, kBool:
		return wtVarint
	case kFloat:
		return wtFixed64
	}
	return wtBytes
}

func keyOf(num int, k kind) []byte {
	return appendVarint(nil, uint64(num)<<3|uint64(wireType(k)))
}
