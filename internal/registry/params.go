package registry

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Defaulter is implemented by element types of lists in parameter structs
// (edges, …) whose fields have defaults: a decoder calls SetDefaults on each
// new element before decoding it.
type Defaulter interface{ SetDefaults() }

// Param describes one key of a plug-in's parameter struct.
type Param struct {
	Key     string // the YAML key
	Type    string // a short type name: int, number, bool, string, list, mapping, duration
	Default string // the default, formatted as it would be written in YAML
	Doc     string // the `doc` tag: meaning and allowed range
}

// Params lists the keys of a parameter struct (a pointer to a struct or a
// struct), in field order, with their defaults taken from v. Inline fields
// (`yaml:",inline"`) contribute their own keys; fields without a yaml key
// are skipped.
func Params(v any) []Param {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	if !rv.CanAddr() {
		c := reflect.New(rv.Type()).Elem()
		c.Set(rv)
		rv = c
	}
	var out []Param
	Fields(rv, func(i int, key, opts string, fv reflect.Value) {
		if strings.Contains(opts, "inline") {
			out = append(out, Params(fv.Addr().Interface())...)
			return
		}
		f := rv.Type().Field(i)
		typ := typeName(f.Type)
		if reflect.PointerTo(f.Type).Implements(chooserType) {
			typ = fv.Addr().Interface().(Chooser).Axis().Name() + " kind"
		}
		out = append(out, Param{Key: key, Type: typ, Default: format(fv), Doc: f.Tag.Get("doc")})
	})
	return out
}

// Fields calls fn for every exported field of the struct v that yaml
// encodes (its key is not "-"), in field order, with the field's key, its
// tag options and its value.
func Fields(v reflect.Value, fn func(i int, key, opts string, fv reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key, opts := YAMLKey(f)
		if key == "-" || (f.Anonymous && f.Tag == "" && emptyStruct(f.Type)) {
			// An embedded base type without fields (graph.NoFailure)
			// supplies methods, not a key.
			continue
		}
		fn(i, key, opts, v.Field(i))
	}
}

func emptyStruct(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			return false
		}
	}
	return true
}

// YAMLKey returns the key of a struct field as yaml encodes it (the tag's
// name, or the lower-cased field name) and the tag's options.
func YAMLKey(f reflect.StructField) (key, opts string) {
	tag := f.Tag.Get("yaml")
	key, opts, _ = strings.Cut(tag, ",")
	if key == "" && !strings.Contains(opts, "inline") {
		key = strings.ToLower(f.Name)
	}
	return key, opts
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	chooserType  = reflect.TypeFor[Chooser]()
)

func typeName(t reflect.Type) string {
	if t == durationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return "mapping"
}

func format(v reflect.Value) string {
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Len() == 0 {
			return "[]"
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = format(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "—"
		}
		return format(v.Elem())
	case reflect.Struct:
		if k, ok := v.Interface().(interface{ KindName() string }); ok {
			return k.KindName()
		}
	}
	return fmt.Sprint(v.Interface())
}
