package scenarios

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"time"

	"go.yaml.in/yaml/v3"

	"hgpsim/internal/registry"
)

// The decoder below replaces yaml's KnownFields: it walks a mapping node
// against the target struct itself, so that
//   - a key unknown to the section, or to the chosen kind of a plug-in, is
//     an error with its line and the keys that are allowed there;
//   - a Choice field reads its kind first and then the kind's parameters
//     from the same mapping (see Choice);
//   - values are decoded over what the target already holds, so defaults
//     survive for every key the file does not set.
//
// Scalars, and lists and maps of scalars, are decoded by yaml itself, whose
// type errors carry line numbers too.

var (
	chooserType  = reflect.TypeFor[registry.Chooser]()
	durationType = reflect.TypeFor[time.Duration]()
)

// kindKey is the key under which a Choice is the kind of its section, with
// its parameters beside it (see registry.Choice).
const kindKey = "kind"

// decodeInto decodes node over the value ptr points to. where names the
// section for error messages ("network", "sgp.lr").
func decodeInto(node *yaml.Node, ptr reflect.Value, where string) error {
	if node.Kind == yaml.AliasNode {
		node = node.Alias
	}
	v := ptr.Elem()
	if ch, ok := ptr.Interface().(registry.Chooser); ok {
		return decodeChoice(node, ch, where)
	}
	switch {
	case v.Kind() == reflect.Struct && v.Type() != durationType:
		return decodeStruct(node, v, where)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct:
		if node.Tag == "!!null" {
			v.Set(reflect.Zero(v.Type()))
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return decodeInto(node, v, where)
	case v.Kind() == reflect.Slice && isStructLike(v.Type().Elem()):
		if node.Kind != yaml.SequenceNode {
			return fmt.Errorf("line %d: %s must be a list", node.Line, where)
		}
		out := reflect.MakeSlice(v.Type(), len(node.Content), len(node.Content))
		for i, item := range node.Content {
			el := out.Index(i)
			if d, ok := el.Addr().Interface().(registry.Defaulter); ok {
				d.SetDefaults()
			}
			if err := decodeInto(item, el.Addr(), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
		v.Set(out)
		return nil
	case v.Kind() == reflect.Map && isStructLike(v.Type().Elem()):
		if node.Tag == "!!null" {
			return nil
		}
		if node.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: %s must be a mapping", node.Line, where)
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k := reflect.New(v.Type().Key())
			if err := node.Content[i].Decode(k.Interface()); err != nil {
				return err
			}
			el := reflect.New(v.Type().Elem())
			if old := v.MapIndex(k.Elem()); old.IsValid() {
				el.Elem().Set(old)
			}
			if err := decodeInto(node.Content[i+1], el, where+"."+node.Content[i].Value); err != nil {
				return err
			}
			v.SetMapIndex(k.Elem(), el.Elem())
		}
		return nil
	}
	return node.Decode(ptr.Interface())
}

func isStructLike(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != durationType
}

// decodeChoice decodes a Choice that is not the kind of its section: a
// name alone, or a mapping with `kind` and the kind's parameters.
func decodeChoice(node *yaml.Node, ch registry.Chooser, where string) error {
	if node.Kind == yaml.ScalarNode && node.Tag != "!!null" {
		if err := ch.Choose(node.Value); err != nil {
			return fmt.Errorf("line %d: %s: %v", node.Line, where, err)
		}
		return nil
	}
	ks := keyset{fields: map[string][]int{}, kinds: map[string]registry.Chooser{kindKey: ch}, choices: []registry.Chooser{ch}}
	return decodeMapping(node, reflect.Value{}, ks, where)
}

// keyset is what a mapping may contain: the keys of plain fields, the keys
// that select a kind, and (through those kinds) the kinds' parameters.
type keyset struct {
	fields  map[string][]int // key → path to the field (through inline structs)
	kinds   map[string]registry.Chooser
	choices []registry.Chooser // the values of kinds, in field order
}

func decodeStruct(node *yaml.Node, v reflect.Value, where string) error {
	ks := keyset{fields: map[string][]int{}, kinds: map[string]registry.Chooser{}}
	collectFields(v, nil, &ks)
	return decodeMapping(node, v, ks, where)
}

func decodeMapping(node *yaml.Node, v reflect.Value, ks keyset, where string) error {
	if node.Tag == "!!null" {
		return nil
	}
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s must be a mapping, got %s", node.Line, sectionName(where), describeNode(node))
	}
	// The kinds first, so that parameter keys are checked against the
	// chosen kind whatever the key order in the file.
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := node.Content[i]
		if ch, ok := ks.kinds[k.Value]; ok {
			var name string
			if err := node.Content[i+1].Decode(&name); err != nil {
				return fmt.Errorf("line %d: %s must be a name: %s", k.Line, join(where, k.Value), cleanYAMLError(err))
			}
			if err := ch.Choose(name); err != nil {
				return fmt.Errorf("line %d: %s: %v", k.Line, join(where, k.Value), err)
			}
		}
	}
	params := make([]*yaml.Node, len(ks.choices))
	seen := map[string]int{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, val := node.Content[i], node.Content[i+1]
		if prev, dup := seen[k.Value]; dup {
			return fmt.Errorf("line %d: %s: key %q appears twice (first on line %d)", k.Line, sectionName(where), k.Value, prev)
		}
		seen[k.Value] = k.Line
		if _, ok := ks.kinds[k.Value]; ok {
			continue
		}
		if index, ok := ks.fields[k.Value]; ok {
			if err := decodeInto(val, v.FieldByIndex(index).Addr(), join(where, k.Value)); err != nil {
				return err
			}
			continue
		}
		owner := -1
		for c, ch := range ks.choices {
			if hasKey(ch.ParamsValue(), k.Value) {
				owner = c
				break
			}
		}
		if owner < 0 {
			return unknownKey(k, where, ks)
		}
		if params[owner] == nil {
			params[owner] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: node.Line, Column: node.Column}
		}
		params[owner].Content = append(params[owner].Content, k, val)
	}
	for c, p := range params {
		if p == nil {
			continue
		}
		if err := decodeInto(p, reflect.ValueOf(ks.choices[c].ParamsValue()), where); err != nil {
			return err
		}
	}
	return nil
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

func sectionName(where string) string {
	if where == "" {
		return "the top level"
	}
	return where
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// collectFields adds the keys of the struct v to ks. A Choice under the
// key `kind` selects the section's kind; any other Choice is a plain field
// (decoded by decodeChoice).
func collectFields(v reflect.Value, prefix []int, ks *keyset) {
	registry.Fields(v, func(i int, key, opts string, fv reflect.Value) {
		index := append(slices.Clone(prefix), i)
		switch {
		case strings.Contains(opts, "inline"):
			collectFields(fv, index, ks)
		case key == kindKey && fv.Addr().Type().Implements(chooserType):
			ch := fv.Addr().Interface().(registry.Chooser)
			ks.kinds[key] = ch
			ks.choices = append(ks.choices, ch)
		default:
			ks.fields[key] = index
		}
	})
}

// hasKey reports whether the parameter struct p (a pointer) has a key.
func hasKey(p any, key string) bool {
	for _, prm := range registry.Params(p) {
		if prm.Key == key {
			return true
		}
	}
	return false
}

func unknownKey(k *yaml.Node, where string, ks keyset) error {
	var allowed []string
	for key := range ks.fields {
		allowed = append(allowed, key)
	}
	for key := range ks.kinds {
		allowed = append(allowed, key)
	}
	var kinds []string
	for _, ch := range ks.choices {
		for _, p := range registry.Params(ch.ParamsValue()) {
			allowed = append(allowed, p.Key)
		}
		if ch.Kind() != "" {
			kinds = append(kinds, ch.Axis().Name()+" "+ch.Kind())
		}
	}
	slices.Sort(allowed)
	allowed = slices.Compact(allowed)
	forKind := ""
	if len(kinds) > 0 {
		forKind = " for " + strings.Join(kinds, ", ")
	}
	// The common mistake is a key that another kind of the same axis takes
	// (prob on stochastic-directed): say which.
	hint := ""
	for _, ch := range ks.choices {
		var others []string
		for _, kind := range ch.Axis().Kinds() {
			if kind == ch.Kind() {
				continue
			}
			if _, ps, _ := ch.Axis().Describe(kind); containsKey(ps, k.Value) {
				others = append(others, kind)
			}
		}
		if len(others) > 0 {
			hint = fmt.Sprintf("; %s means something only for %s %s", k.Value, ch.Axis().Name(), strings.Join(others, ", "))
		}
	}
	return fmt.Errorf("line %d: unknown key %q in %s%s (allowed: %s)%s", k.Line, k.Value, sectionName(where), forKind, strings.Join(allowed, ", "), hint)
}

func containsKey(ps []registry.Param, key string) bool {
	for _, p := range ps {
		if p.Key == key {
			return true
		}
	}
	return false
}

// encodeValue renders v as a yaml node, the inverse of decodeInto: Choice
// fields become their kind key followed by their parameters.
func encodeValue(v reflect.Value) (*yaml.Node, error) {
	if v.Kind() == reflect.Struct && v.CanAddr() && v.Addr().Type().Implements(chooserType) {
		return encodeChoice(v.Addr().Interface().(registry.Chooser))
	}
	switch {
	case v.Kind() == reflect.Struct && v.Type() != durationType:
		return encodeStruct(v)
	case v.Kind() == reflect.Pointer && isStructLike(v.Type()):
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
		}
		return encodeValue(v.Elem())
	case v.Kind() == reflect.Slice && isStructLike(v.Type().Elem()):
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i := range v.Len() {
			n, err := encodeValue(v.Index(i))
			if err != nil {
				return nil, err
			}
			seq.Content = append(seq.Content, n)
		}
		return seq, nil
	case v.Kind() == reflect.Map && isStructLike(v.Type().Elem()):
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			n, err := encodeValue(v.MapIndex(k))
			if err != nil {
				return nil, err
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprint(k)}, n)
		}
		return m, nil
	}
	n := &yaml.Node{}
	if err := n.Encode(v.Interface()); err != nil {
		return nil, err
	}
	return n, nil
}

func encodeStruct(v reflect.Value) (*yaml.Node, error) {
	if !v.CanAddr() {
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		v = c
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(key string, n *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, n)
	}
	var err error
	registry.Fields(v, func(_ int, key, opts string, fv reflect.Value) {
		if err != nil || (strings.Contains(opts, "omitempty") && fv.IsZero()) {
			return
		}
		if strings.Contains(opts, "inline") {
			var n *yaml.Node
			if n, err = encodeStruct(fv); err == nil {
				m.Content = append(m.Content, n.Content...)
			}
			return
		}
		if fv.Addr().Type().Implements(chooserType) {
			ch := fv.Addr().Interface().(registry.Chooser)
			name := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ch.Kind()}
			if ch.ParamsValue() == nil {
				// A choice left to its default (a Choice built in code,
				// not decoded): its name, if it has one.
				if ch.Kind() != "" {
					add(key, name)
				}
				return
			}
			var ps *yaml.Node
			if ps, err = encodeValue(reflect.ValueOf(ch.ParamsValue())); err != nil {
				return
			}
			switch {
			case key == kindKey: // parameters are siblings
				add(key, name)
				m.Content = append(m.Content, ps.Content...)
			case len(ps.Content) == 0: // a kind without parameters: its name
				add(key, name)
			default:
				var n *yaml.Node
				if n, err = encodeChoice(ch); err == nil {
					add(key, n)
				}
			}
			return
		}
		var n *yaml.Node
		if n, err = encodeValue(fv); err == nil {
			add(key, n)
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// encodeChoice renders a Choice that is not the kind of its section: a
// mapping with its kind and its parameters.
func encodeChoice(ch registry.Chooser) (*yaml.Node, error) {
	if ch.ParamsValue() == nil {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: kindKey}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: ch.Kind()}}}, nil
	}
	ps, err := encodeValue(reflect.ValueOf(ch.ParamsValue()))
	if err != nil {
		return nil, err
	}
	name := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ch.Kind()}
	ps.Content = append([]*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: kindKey}, name}, ps.Content...)
	return ps, nil
}
