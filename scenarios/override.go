package scenarios

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Set is one override of a scenario field, `--set key.path=value`: the
// value is YAML (a number, a name, a list or a mapping in flow style) and
// replaces what the file says at the path, which may go through lists by
// index (network.failures.0.offline=0.2) and may create keys the file does
// not have. An override is validated exactly like the file.
type Set struct {
	Arg   string   // as given, for messages
	Path  []string // keys (and list indices)
	Value string   // YAML
}

// ParseSet reads "key.path=value".
func ParseSet(arg string) (Set, error) {
	key, value, ok := strings.Cut(arg, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return Set{}, invalid("--set "+arg, "want key.path=value, e.g. network.delta_min=0.3")
	}
	path := strings.Split(key, ".")
	for _, p := range path {
		if p == "" {
			return Set{}, invalid("--set "+arg, "empty key in %q", key)
		}
	}
	if short, ok := shorthands[key]; ok {
		path, value = short(value)
	}
	return Set{Arg: arg, Path: path, Value: value}, nil
}

// shorthands are override keys that stand for a section: network.burst=k
// (the key of the first scenario format, still the natural grid axis of a
// burst study) sets network.links to {kind: burst, length: k}; k = 1 is
// independent links.
var shorthands = map[string]func(value string) (path []string, yamlValue string){
	"network.burst": func(v string) ([]string, string) {
		return []string{"network", "links"}, "{kind: burst, length: " + v + "}"
	},
}

// setLine is the line number given to the nodes an override writes, so
// that an error on them can name the override instead of a line of the
// file (files are far shorter).
const setLine = 10_000_000

// LoadWith reads a scenario file, applies the overrides in order, and then
// strictly decodes and validates the result.
func LoadWith(path string, sets []Set) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, &InvalidError{Source: path, Msg: err.Error()}
	}
	return ParseWith(path, b, sets)
}

// ParseWith is Parse with overrides.
func ParseWith(src string, b []byte, sets []Set) (Scenario, error) {
	if len(sets) == 0 {
		return Parse(src, b)
	}
	root, err := document(src, b)
	if err != nil {
		return Scenario{}, err
	}
	if root.Kind == 0 || root.Tag == "!!null" {
		root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	for k, s := range sets {
		if err := applySet(root, s, setLine+k); err != nil {
			return Scenario{}, invalid(src, "--set %s: %v", s.Arg, err)
		}
	}
	sc, err := decodeNode(src, root)
	if err != nil {
		return Scenario{}, nameSets(err, sets)
	}
	if err := sc.Validate(); err != nil {
		var args []string
		for _, s := range sets {
			args = append(args, "--set "+s.Arg)
		}
		return Scenario{}, invalid(src, "%s (with %s)", err.Error(), strings.Join(args, ", "))
	}
	return sc, nil
}

// applySet writes s.Value at s.Path under root.
func applySet(root *yaml.Node, s Set, line int) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s.Value), &doc); err != nil {
		return fmt.Errorf("the value is not YAML: %s", cleanYAMLError(err))
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(doc.Content) == 1 {
		value = doc.Content[0]
	}
	setLines(value, line)
	node := root
	for k, key := range s.Path {
		last := k == len(s.Path)-1
		switch node.Kind {
		case yaml.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node.Content) {
				return fmt.Errorf("%s is a list of %d; %q is not an index in it", strings.Join(s.Path[:k], "."), len(node.Content), key)
			}
			if last {
				node.Content[i] = value
				return nil
			}
			node = node.Content[i]
		case yaml.MappingNode:
			var child *yaml.Node
			for j := 0; j+1 < len(node.Content); j += 2 {
				if node.Content[j].Value == key {
					if last {
						node.Content[j+1] = value
						return nil
					}
					child = node.Content[j+1]
					if child.Kind == yaml.ScalarNode && child.Tag != "!!null" {
						// A plug-in named alone (links: burst) gains
						// parameters: {kind: burst, …}.
						kind := *child
						*child = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line,
							Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: kindKey, Line: line}, &kind}}
					} else if child.Tag == "!!null" {
						*child = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
					}
					break
				}
			}
			keyNode := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line}
			if child == nil {
				if last {
					node.Content = append(node.Content, keyNode, value)
					return nil
				}
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
				node.Content = append(node.Content, keyNode, child)
			}
			node = child
		default:
			return fmt.Errorf("%s is not a mapping", strings.Join(s.Path[:k], "."))
		}
	}
	return nil
}

func setLines(n *yaml.Node, line int) {
	n.Line = line
	for _, c := range n.Content {
		setLines(c, line)
	}
}

var reSetLine = regexp.MustCompile(`line (1\d{7})\b`)

// nameSets replaces the line numbers of override nodes in an error by the
// override itself.
func nameSets(err error, sets []Set) error {
	rename := func(msg string) string {
		return reSetLine.ReplaceAllStringFunc(msg, func(m string) string {
			k, _ := strconv.Atoi(reSetLine.FindStringSubmatch(m)[1])
			if i := k - setLine; i >= 0 && i < len(sets) {
				return "--set " + sets[i].Arg
			}
			return m
		})
	}
	if ie, ok := err.(*InvalidError); ok {
		return &InvalidError{Source: ie.Source, Msg: rename(ie.Msg)}
	}
	return fmt.Errorf("%s", rename(err.Error()))
}
