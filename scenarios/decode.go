package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// InvalidError marks a scenario the user must fix (exit code 2).
type InvalidError struct {
	Source string // file name or "scenario"
	Msg    string
}

func (e *InvalidError) Error() string { return e.Source + ": " + e.Msg }

// Invalid returns an InvalidError with a formatted message.
func Invalid(src, format string, a ...any) error {
	return invalid(src, format, a...)
}

func invalid(src, format string, a ...any) error {
	return &InvalidError{Source: src, Msg: fmt.Sprintf(format, a...)}
}

// IsInvalid reports whether err is (or wraps) an InvalidError.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

// Load reads, strictly decodes and validates a scenario file.
func Load(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, &InvalidError{Source: path, Msg: err.Error()}
	}
	return Parse(path, b)
}

// Parse strictly decodes a scenario over the defaults and validates it.
// Unknown keys (also keys that mean nothing for the chosen kind of a
// plug-in), wrong types and multiple documents are errors with line
// numbers.
func Parse(src string, b []byte) (Scenario, error) {
	sc, err := Decode(src, b)
	if err != nil {
		return Scenario{}, err
	}
	if err := sc.Validate(); err != nil {
		return Scenario{}, invalid(src, "%s", err.Error())
	}
	return sc, nil
}

// Decode strictly decodes a scenario over the defaults without validating
// the values.
func Decode(src string, b []byte) (Scenario, error) {
	root, err := document(src, b)
	if err != nil {
		return Scenario{}, err
	}
	if root.Tag == "!!null" {
		return Scenario{}, invalid(src, "the file is empty")
	}
	return decodeNode(src, root)
}

// document parses b as one YAML document and returns its root node.
func document(src string, b []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, invalid(src, "the file is empty")
		}
		return nil, invalid(src, "%s", cleanYAMLError(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, invalid(src, "more than one YAML document; a scenario is one document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return root, nil
}

// decodeNode strictly decodes a scenario's root node over the defaults.
func decodeNode(src string, root *yaml.Node) (Scenario, error) {
	sc := Default()
	if err := decodeInto(root, reflect.ValueOf(&sc), ""); err != nil {
		return Scenario{}, invalid(src, "%s", cleanYAMLError(err))
	}
	return sc, nil
}

// cleanYAMLError turns yaml's multi-line, Go-typed messages into one line
// a user can act on.
func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}

// Marshal renders the resolved scenario (defaults filled in) as YAML.
func Marshal(sc Scenario) ([]byte, error) {
	node, err := encodeValue(reflect.ValueOf(&sc).Elem())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
