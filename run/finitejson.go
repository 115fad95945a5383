package run

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
)

// overflowMark stands in for a non-finite number while encoding; it is the
// largest float64, itself an overflow in any result here.
var overflowMark = []byte(strconv.FormatFloat(math.MaxFloat64, 'g', -1, 64))

// MarshalFinite encodes v as indented JSON with every float64 that is not
// finite written as null: a run whose iterates overflowed (a
// hyper-gradient of norm +Inf on a bursty network) still gets its
// summary, as metrics.jsonl writes such values. v is left as it was.
func MarshalFinite(v any) ([]byte, error) {
	var marked []marked
	markNonFinite(reflect.ValueOf(v), &marked)
	b, err := json.MarshalIndent(v, "", "  ")
	for _, m := range marked {
		m.v.SetFloat(m.was)
	}
	if err != nil || len(marked) == 0 {
		return b, err
	}
	return bytes.ReplaceAll(b, overflowMark, []byte("null")), nil
}

type marked struct {
	v   reflect.Value
	was float64
}

// markNonFinite replaces the non-finite float64 values that JSON encodes,
// reachable from v through pointers, interfaces, structs, slices and
// arrays, by math.MaxFloat64, and records them.
func markNonFinite(v reflect.Value, out *[]marked) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			markNonFinite(v.Elem(), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				markNonFinite(v.Field(i), out)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			markNonFinite(v.Index(i), out)
		}
	case reflect.Float64:
		if f := v.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && v.CanSet() {
			*out = append(*out, marked{v, f})
			v.SetFloat(math.MaxFloat64)
		}
	}
}
